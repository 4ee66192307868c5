#pragma once

// Readiness for systemd's Type=notify (sd_notify(3), without libsystemd):
// a node tells its service manager "READY=1" once its listeners are bound
// and it serves, "STATUS=..." for `systemctl status`, "STOPPING=1" when it
// begins to stop. Outside systemd ($NOTIFY_SOCKET unset) every call does
// nothing, so the same binary runs from a shell, a test or a unit.

#include <string>
#include <string_view>

namespace gtmesh {

/// Sends `state` (newline-separated VAR=value lines) to $NOTIFY_SOCKET.
/// Returns false, with `error`, when the socket is set but the send failed;
/// true when it was sent or there is no service manager to tell.
bool notify_service_manager(std::string_view state, std::string& error);

/// READY=1 with a one-line STATUS; a failure is logged, never fatal.
void notify_ready(const std::string& component, const std::string& status);
/// STOPPING=1; a failure is ignored (the manager sees the exit anyway).
void notify_stopping();

} // namespace gtmesh
