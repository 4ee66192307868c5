#pragma once

// An exception escaping an actor's handler leaves that actor in an unknown
// state; a node that still answers DNS from a frozen snapshot is worse than
// a restart. Every long-lived gtmesh actor installs this handler: it prints
// what happened and ends the process with exit code 70, so that systemd
// (Restart=on-failure) brings the node back. Include from actor files only.

#include <caf/error.hpp>
#include <caf/scheduled_actor.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace gtmesh {

inline constexpr int exit_code_unexpected_exception = 70;

inline void exit_on_unexpected_exception(caf::scheduled_actor* self, const char* actor_name) {
  std::string name = actor_name;
  self->set_exception_handler([name](caf::scheduled_actor*, std::exception_ptr& e) -> caf::error {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    std::fprintf(stderr, "gtmesh: fatal: unexpected exception in the %s actor: %s; exiting so that the node restarts\n",
                 name.c_str(), what.c_str());
    std::fflush(stderr);
    std::_Exit(exit_code_unexpected_exception);
  });
}

} // namespace gtmesh
