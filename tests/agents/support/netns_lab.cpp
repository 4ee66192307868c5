#include "tests/agents/support/netns_lab.hpp"

#include "tests/agents/support/test_support.hpp"

#include <fcntl.h>
#include <sched.h>
#include <thread>
#include <unistd.h>

namespace gtmesh::agents::test {

std::unique_ptr<netns_lab> netns_lab::create(std::string& error) {
  if (!is_root()) {
    error = "needs root (network namespaces)";
    return nullptr;
  }
  if (!have_program("ip")) {
    error = "needs iproute2 (ip)";
    return nullptr;
  }
  std::unique_ptr<netns_lab> lab(new netns_lab);
  std::string base = "gtmag" + std::to_string(::getpid());
  lab->client_ = base + "c";
  lab->router_ = base + "r";
  lab->far_ = base + "f";
  const std::string &c = lab->client_, &r = lab->router_, &f = lab->far_;
  // Leftovers of an earlier process with the same pid.
  for (const auto& n : {c, r, f})
    run_command("ip netns del " + n + " >/dev/null 2>&1");
  std::string q = " >/dev/null 2>&1";
  std::vector<std::string> v4 = {
    "ip netns add " + c, "ip netns add " + r, "ip netns add " + f,
    "ip -n " + c + " link set lo up", "ip -n " + r + " link set lo up", "ip -n " + f + " link set lo up",
    // No duplicate address detection on the new links: IPv6 is usable at once.
    "ip netns exec " + c + " sysctl -qw net.ipv6.conf.default.accept_dad=0 2>/dev/null || true",
    "ip netns exec " + r + " sysctl -qw net.ipv6.conf.default.accept_dad=0 2>/dev/null || true",
    "ip netns exec " + f + " sysctl -qw net.ipv6.conf.default.accept_dad=0 2>/dev/null || true",
    "ip -n " + c + " link add c0 type veth peer name r0 netns " + r,
    "ip -n " + r + " link add r1 type veth peer name f0 netns " + f,
    "ip -n " + c + " addr add 10.77.1.1/24 dev c0", "ip -n " + r + " addr add 10.77.1.2/24 dev r0",
    "ip -n " + r + " addr add 10.77.2.1/24 dev r1", "ip -n " + f + " addr add 10.77.2.2/24 dev f0",
    "ip -n " + c + " link set c0 up", "ip -n " + r + " link set r0 up", "ip -n " + r + " link set r1 up",
    "ip -n " + f + " link set f0 up",
    "ip -n " + c + " route add 10.77.2.0/24 via 10.77.1.2", "ip -n " + f + " route add default via 10.77.2.1",
    "ip netns exec " + r + " sysctl -qw net.ipv4.ip_forward=1",
    "ip netns exec " + f + " sysctl -qw net.ipv4.ip_default_ttl=128",
    "ip netns exec " + c + " sysctl -qw net.ipv4.ping_group_range='0 2147483647'",
  };
  for (const auto& cmd : v4)
    if (run_command(cmd + q) != 0) {
      error = "setup failed: " + cmd;
      return nullptr; // the destructor removes what was made
    }
  std::vector<std::string> v6 = {
    "ip -n " + c + " addr add fd77:1::1/64 dev c0 nodad", "ip -n " + r + " addr add fd77:1::2/64 dev r0 nodad",
    "ip -n " + r + " addr add fd77:2::1/64 dev r1 nodad", "ip -n " + f + " addr add fd77:2::2/64 dev f0 nodad",
    "ip -n " + c + " -6 route add fd77:2::/64 via fd77:1::2", "ip -n " + f + " -6 route add default via fd77:2::1",
    "ip netns exec " + r + " sysctl -qw net.ipv6.conf.all.forwarding=1",
    "ip netns exec " + f + " sysctl -qw net.ipv6.conf.f0.hop_limit=255",
  };
  lab->ipv6_ = true;
  for (const auto& cmd : v6)
    if (run_command(cmd + q) != 0)
      lab->ipv6_ = false;
  // Readiness: IPv6 neighbour discovery needs the link-local addresses, which
  // stay tentative until duplicate address detection is done.
  if (lab->ipv6_)
    lab->ipv6_ = wait_until([&] {
      for (const auto& n : {c, r, f})
        if (run_command("test -z \"$(ip -n " + n + " -6 addr show tentative)\"") != 0)
          return false;
      return true;
    }, std::chrono::seconds(10), std::chrono::milliseconds(50));
  return lab;
}

netns_lab::~netns_lab() {
  for (const auto& n : {client_, router_, far_})
    if (!n.empty())
      run_command("ip netns del " + n + " >/dev/null 2>&1");
}

int netns_lab::exec_in(const std::string& ns, const std::string& cmd) {
  return run_command("ip netns exec " + ns + " " + cmd);
}

bool netns_lab::run_in(const std::string& ns, const std::function<void()>& fn) {
  bool ok = false;
  std::thread t([&] {
    int fd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return;
    ok = ::setns(fd, CLONE_NEWNET) == 0;
    ::close(fd);
    if (ok)
      fn();
  });
  t.join();
  return ok;
}

netns_scope::netns_scope(const std::string& ns) {
  previous_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int fd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
  if (previous_ >= 0 && fd >= 0)
    ok_ = ::setns(fd, CLONE_NEWNET) == 0;
  if (fd >= 0)
    ::close(fd);
}

netns_scope::~netns_scope() {
  if (previous_ >= 0) {
    if (ok_)
      ::setns(previous_, CLONE_NEWNET);
    ::close(previous_);
  }
}

} // namespace gtmesh::agents::test
