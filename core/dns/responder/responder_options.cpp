#include "core/dns/responder/responder_options.hpp"

#include <charconv>
#include <thread>

namespace gtmesh::dns {

std::optional<listen_address> listen_address::parse(std::string_view text) {
  std::string_view host, port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return std::nullopt;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) // bare IPv6 needs brackets
      return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  auto address = ip_address::parse(host);
  if (!address || port.empty())
    return std::nullopt;
  if (text.front() == '[' && address->v4())
    return std::nullopt;
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value > 65535)
    return std::nullopt;
  return listen_address{*address, static_cast<uint16_t>(value)};
}

std::string listen_address::to_string() const {
  if (address.v4())
    return address.to_string() + ":" + std::to_string(port);
  return "[" + address.to_string() + "]:" + std::to_string(port);
}

int responder_options::udp_thread_count() const noexcept {
  if (udp_threads > 0)
    return udp_threads;
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

size_t responder_options::tcp_client_limit() const noexcept {
  if (tcp_max_connections_per_client > 0)
    return tcp_max_connections_per_client;
  return tcp_max_connections / 16 > 0 ? tcp_max_connections / 16 : 1;
}

std::string responder_options::validate() const {
  if (listen.empty())
    return "no listen address";
  if (udp_threads < 0 || udp_threads > 256)
    return "udp threads must be 0 (one per core) to 256";
  if (udp_batch < 1 || udp_batch > 1024)
    return "udp batch must be 1 to 1024";
  if (lookup.max_udp_size < classic_udp_size || lookup.max_udp_size > max_udp_buffer)
    return "max UDP size must be 512 to " + std::to_string(max_udp_buffer);
  if (lookup.max_cname_chain < 0 || lookup.max_cname_chain > max_cname_chain_limit)
    return "CNAME chain limit must be 0 to " + std::to_string(max_cname_chain_limit);
  if (tcp && tcp_max_connections == 0)
    return "TCP connection limit must be at least 1";
  if (tcp && tcp_idle_timeout.count() <= 0)
    return "TCP idle timeout must be positive";
  if (tcp && tcp_max_connections_per_client > tcp_max_connections)
    return "TCP connections per client must not exceed the TCP connection limit";
  if (tcp_client_ipv4_prefix < 0 || tcp_client_ipv4_prefix > 32 || tcp_client_ipv6_prefix < 0 ||
      tcp_client_ipv6_prefix > 128)
    return "TCP client prefix lengths must be 0-32 (IPv4) and 0-128 (IPv6)";
  if (tcp && tcp_pressure_idle_timeout.count() <= 0)
    return "TCP idle timeout under pressure must be positive";
  if (rrl.ipv4_prefix < 0 || rrl.ipv4_prefix > 32 || rrl.ipv6_prefix < 0 || rrl.ipv6_prefix > 128)
    return "RRL prefix lengths must be 0-32 (IPv4) and 0-128 (IPv6)";
  return {};
}

} // namespace gtmesh::dns
