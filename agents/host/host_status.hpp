#pragma once

namespace gtmesh::agents {

/// Answers of one round of access-point probes, by class.
struct access_point_answers {
  int wan_configured = 0;
  int wan_answered = 0;
  int lan_configured = 0;
  int lan_answered = 0;
};

/// The host `status` rule (SPEC section 1: a composite of the DC's WAN and
/// LAN access points): up (1) when at least one WAN access point and at
/// least one LAN access point answered. A class with no access points
/// configured does not count against the DC; with none configured at all,
/// the host is up as long as its agent runs. Otherwise down (0).
double host_status(const access_point_answers& a) noexcept;

} // namespace gtmesh::agents
