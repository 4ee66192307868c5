#pragma once

#include "tests/agents/support/test_support.hpp"

#include <memory>
#include <string>

namespace gtmesh::agents::test {

/// A real nginx (Debian nginx-light) in the foreground with a config made
/// from `http_block` (the inside of `http { }`), all files in `dir`.
/// nullptr (with `error` set) if nginx is missing or does not come up on
/// `ready_port` within 10 s.
std::unique_ptr<child_process> start_nginx(const temp_dir& dir, const std::string& http_block, uint16_t ready_port,
                                           std::string& error);

/// A real haproxy in the foreground (-db) with config `cfg`; ready when the
/// stats socket `socket_path` accepts connections.
std::unique_ptr<child_process> start_haproxy(const temp_dir& dir, const std::string& cfg,
                                             const std::string& socket_path, std::string& error);

/// Sends one command to an HAProxy stats socket and returns the answer.
std::string haproxy_command(const std::string& socket_path, const std::string& command);

} // namespace gtmesh::agents::test
