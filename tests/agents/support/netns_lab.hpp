#pragma once

#include <functional>
#include <memory>
#include <string>

namespace gtmesh::agents::test {

/// Three network namespaces made by the test, removed on destruction:
///
///   client  c0 10.77.1.1/24 fd77:1::1/64
///      |  veth
///   router  r0 10.77.1.2/24 fd77:1::2/64   (forwards IPv4 and IPv6)
///           r1 10.77.2.1/24 fd77:2::1/64
///      |  veth
///   far     f0 10.77.2.2/24 fd77:2::2/64   (initial TTL 128, hop limit 255)
///
/// So from `client`, the router answers with TTL 64 (0 hops) and the far
/// host with TTL 127 / hop limit 254 (1 hop). Datagram ICMP is allowed in
/// `client` (its own net.ipv4.ping_group_range); the root namespace is not
/// touched. Needs root and iproute2. Names carry the pid, so parallel test
/// processes do not collide.
class netns_lab {
public:
  /// nullptr with `error` set if it cannot be built (not root, no `ip`).
  static std::unique_ptr<netns_lab> create(std::string& error);
  ~netns_lab();

  const std::string& client() const noexcept { return client_; }
  const std::string& router() const noexcept { return router_; }
  const std::string& far() const noexcept { return far_; }
  bool has_ipv6() const noexcept { return ipv6_; }

  /// Runs a shell command inside namespace `ns`; returns its exit status.
  static int exec_in(const std::string& ns, const std::string& cmd);
  /// Runs `fn` on a helper thread that has joined namespace `ns`; sockets it
  /// opens stay in `ns`. Returns false if the namespace cannot be joined.
  static bool run_in(const std::string& ns, const std::function<void()>& fn);

private:
  netns_lab() = default;
  std::string client_, router_, far_;
  bool ipv6_ = false;
};

/// Moves the calling thread into network namespace `ns` for the scope and
/// back to its previous namespace on destruction (even when a test fails).
/// Sockets opened inside the scope stay in `ns`.
class netns_scope {
public:
  explicit netns_scope(const std::string& ns);
  ~netns_scope();
  bool ok() const noexcept { return ok_; }

private:
  int previous_ = -1;
  bool ok_ = false;
};

} // namespace gtmesh::agents::test
