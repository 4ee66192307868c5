#include "agents/probes/probe_spec.hpp"

#include "agents/probes/host_port.hpp"
#include "core/net/ip_address.hpp"

namespace gtmesh::agents {

namespace {

std::string_view protocol_name(probe_protocol p) {
  switch (p) {
    case probe_protocol::http:
      return "http";
    case probe_protocol::https:
      return "https";
    case probe_protocol::tcp:
      return "tcp";
  }
  return "?";
}

probe_spec from_settings(std::string address, uint16_t port, const probe_settings& s) {
  probe_spec p;
  p.protocol = s.protocol;
  p.address = std::move(address);
  p.port = s.port != 0 ? s.port : port;
  p.host_header = s.host.empty() ? "127.0.0.1" : s.host;
  if (s.protocol == probe_protocol::https && !s.host.empty() && !ip_address::parse(s.host))
    p.sni = s.host;
  p.path = s.path.empty() ? "/" : s.path;
  p.timeout_ms = s.timeout_ms;
  p.match_status = s.match_status;
  if (p.match_status.empty())
    p.match_status = {{200, 399}};
  p.match_body = s.match_body;
  p.headers = s.headers;
  if (p.protocol == probe_protocol::tcp) {
    p.headers.clear();
    p.host_header.clear();
    p.path.clear();
    p.match_status.clear();
    p.match_body.clear();
  }
  return p;
}

} // namespace

std::string probe_spec::url() const {
  host_port hp{address, port};
  if (protocol == probe_protocol::tcp)
    return "tcp://" + hp.text();
  return std::string(protocol_name(protocol)) + "://" + hp.text() + path;
}

std::string probe_spec::identity() const {
  std::string id = url();
  id += "|host=" + host_header + "|sni=" + sni + "|timeout=" + std::to_string(timeout_ms) + "|status=";
  for (const auto& r : match_status)
    id += std::to_string(r.first) + "-" + std::to_string(r.last) + ",";
  id += "|body=" + match_body;
  for (const auto& [name, value] : headers)
    id += "|" + name + ": " + value;
  return id;
}

std::optional<probe_spec> make_backend_probe_spec(std::string_view backend, const probe_settings& s) {
  auto hp = parse_host_port(backend);
  if (!hp)
    return std::nullopt;
  return from_settings(hp->host, hp->port, s);
}

std::optional<probe_spec> make_endpoint_probe_spec(std::string_view target, const probe_settings& s) {
  if (target.empty())
    return std::nullopt;
  uint16_t port = s.protocol == probe_protocol::https ? 443 : s.protocol == probe_protocol::http ? 80 : 0;
  if (s.port == 0 && port == 0)
    return std::nullopt;
  std::string address(target);
  if (address.ends_with("."))
    address.pop_back(); // a CNAME-style absolute name
  return from_settings(address, port, s);
}

std::optional<probe_spec> make_alias_probe_spec(std::string_view address, std::string_view target,
                                                const probe_settings& s) {
  auto spec = make_endpoint_probe_spec(address, s);
  if (!spec || !ip_address::parse(address))
    return std::nullopt;
  std::string name(target);
  if (name.ends_with("."))
    name.pop_back();
  if (s.host.empty() && spec->protocol != probe_protocol::tcp) {
    spec->host_header = name;
    if (spec->protocol == probe_protocol::https)
      spec->sni = name;
  }
  return spec;
}

bool status_matches(int status, const std::vector<status_range>& ranges) noexcept {
  for (const auto& r : ranges)
    if (status >= r.first && status <= r.last)
      return true;
  return false;
}

} // namespace gtmesh::agents
