// The `probes` and `services` sections: probe settings (named or inline) and
// each service's backends, load-balancer stats and processes per DC.

#include "core/config/loader/loader.hpp"
#include "core/text/ascii_case.hpp"

#include <cstring>

namespace gtmesh::config_loading {

std::optional<probe_settings> loader::parse_probe(const node& n, const std::string& field, bool named) {
  if (!is_map(n, field))
    return std::nullopt;
  check_keys(n, field, config_fields::keys_of("probe"));
  probe_settings p;
  if (auto s = str(n, "name", field, named))
    p.name = *s;
  if (auto s = str(n, "protocol", field)) {
    if (*s == "http")
      p.protocol = probe_protocol::http;
    else if (*s == "https")
      p.protocol = probe_protocol::https;
    else if (*s == "tcp")
      p.protocol = probe_protocol::tcp;
    else
      error(child(n, "protocol"), join(field, "protocol"), "unknown protocol '" + *s + "' (allowed: http, https, tcp)");
  }
  if (auto s = str(n, "host", field))
    p.host = *s;
  if (auto s = str(n, "path", field)) {
    if (s->empty() || s->front() != '/')
      error(child(n, "path"), join(field, "path"), "probe path must start with '/' (got '" + *s + "')");
    else
      p.path = *s;
  }
  if (auto v = integer(n, "port", field, 1, 65535))
    p.port = static_cast<uint16_t>(*v);
  if (node h = child(n, "headers")) {
    const std::string hf = join(field, "headers");
    if (!h.is_map()) {
      error(h, hf, "expected a map of header name to value ({X-Probe: gtmesh})");
    } else if (h.size() > 16) {
      error(h, hf, "at most 16 headers");
    } else {
      std::set<std::string> seen;
      for (size_t i = 0; i < h.size(); ++i) {
        const std::string name = h.key_at(i).text();
        const node v = h.value_at(i);
        const bool token = !name.empty() && name.size() <= 64 &&
                           std::all_of(name.begin(), name.end(), [](char c) {
                             return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c);
                           });
        const std::string lower = ascii_lower(name);
        const std::string text = v.is_scalar() ? v.text() : std::string();
        const bool printable = std::none_of(text.begin(), text.end(), [](char c) {
          return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
        });
        if (!token)
          error(h.key_at(i), join(hf, name), "not an HTTP header name");
        else if (lower == "host")
          error(h.key_at(i), join(hf, name), "set by the probe itself (use the probe's host field)");
        else if (probe_sets_header(lower))
          error(h.key_at(i), join(hf, name), "set by the probe itself (it sends one GET and closes)");
        else if (!seen.insert(lower).second)
          error(h.key_at(i), join(hf, name), "the same header twice (names are case-insensitive)");
        else if (!v.is_scalar() || text.size() > 1024 || !printable)
          error(v, join(hf, name), "expected one line of text without control characters, at most 1024 bytes");
        else
          p.headers.emplace_back(name, text);
      }
    }
  }
  if (auto v = duration(n, "interval", field, 1000, 86'400'000))
    p.interval_ms = *v;
  if (auto v = duration(n, "timeout", field, 1, 86'400'000))
    p.timeout_ms = *v;
  else if (!child(n, "timeout"))
    p.timeout_ms = std::min(p.timeout_ms, p.interval_ms); // default 30 s, never beyond the interval
  if (auto v = integer(n, "unhealthy_threshold", field, 1, 20))
    p.unhealthy_threshold = static_cast<int>(*v);
  if (auto v = integer(n, "healthy_threshold", field, 1, 20))
    p.healthy_threshold = static_cast<int>(*v);
  if (node q = child(n, "quorum")) {
    const std::string qf = join(field, "quorum");
    const char* help = "expected any, majority or {at_least: N}";
    if (q.is_scalar() && q.text() == "any") {
      p.quorum = {};
    } else if (q.is_scalar() && q.text() == "majority") {
      p.quorum = {health::quorum_kind::majority, 0};
    } else if (q.is_map()) {
      check_keys(q, qf, config_fields::keys_of("quorum"));
      if (!child(q, "at_least"))
        error(q, qf, help);
      else if (auto v = integer(q, "at_least", qf, 1, static_cast<long long>(max_datacenters))) {
        p.quorum = {health::quorum_kind::at_least, static_cast<int>(*v)};
        // An endpoint is probed from every DC: more could never agree.
        if (named && *v > static_cast<long long>(cfg_.datacenters.size()))
          error(child(q, "at_least"), join(qf, "at_least"),
                "at_least " + std::to_string(*v) + " vantage points, but the config has " +
                  std::to_string(cfg_.datacenters.size()) + " datacenter(s): the endpoint could never be healthy");
      }
    } else {
      error(q, qf, std::string(help) + " (got '" + (q.is_scalar() ? q.text() : std::string("a list")) + "')");
    }
  }
  if (auto v = integer(n, "min_servers", field, 0, 1000))
    p.min_servers = static_cast<int>(*v);
  if (node m = child(n, "match")) {
    std::string mf = join(field, "match");
    if (is_map(m, mf)) {
      check_keys(m, mf, config_fields::keys_of("probe_match"));
      if (auto s = str(m, "status", mf)) {
        p.match_status.clear();
        std::stringstream ss(*s);
        std::string part;
        bool bad = false;
        while (std::getline(ss, part, ',')) {
          part.erase(std::remove(part.begin(), part.end(), ' '), part.end());
          auto dash = part.find('-');
          auto a = to_int(part.substr(0, dash));
          auto b = dash == std::string::npos ? a : to_int(part.substr(dash + 1));
          if (!a || !b || *a < 100 || *b > 599 || *a > *b) {
            bad = true;
            break;
          }
          p.match_status.push_back(status_range{static_cast<int>(*a), static_cast<int>(*b)});
        }
        if (bad || p.match_status.empty())
          error(child(m, "status"), join(mf, "status"),
                "expected a comma list of HTTP codes and ranges within 100-599, e.g. \"200-399,403\"");
      }
      if (auto s = str(m, "body", mf)) {
        if (s->size() > 4090)
          error(child(m, "body"), join(mf, "body"),
                "body match is " + std::to_string(s->size()) + " characters; the limit is 4090");
        else
          p.match_body = *s;
      }
    }
  }
  if (p.protocol == probe_protocol::tcp && (child(n, "path") || child(n, "match") || child(n, "host")))
    warn(n, field, "path, host and match are ignored by tcp probes");
  if (p.timeout_ms > p.interval_ms)
    warn(n, join(field, "timeout"), "timeout is longer than the interval; probes will overlap");
  if (named && find_probe(p.name))
    error(n, join(field, "name"), "duplicate probe name '" + p.name + "'");
  return p;
}

void loader::parse_service(const node& n, const std::string& field) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("service"));
  service s;
  s.where = where(n);
  if (auto v = str(n, "name", field, true))
    s.name = *v;
  if (node p = child(n, "probe")) {
    std::string pf = join(field, "probe");
    if (p.is_scalar()) {
      if (const probe_settings* named = find_probe(p.text()))
        s.probe = *named;
      else
        error(p, pf, "unknown probe '" + p.text() + "' (define it under probes)");
    } else if (auto parsed = parse_probe(p, pf, false)) {
      s.probe = *parsed;
    }
  }
  if (auto v = duration(n, "interval", field, 1000, 3'600'000))
    s.interval_ms = *v;
  auto per_dc = [&](std::string_view key, auto&& fn) {
    node m = child(n, key);
    if (!m)
      return;
    std::string mf = join(field, key);
    if (!is_map(m, mf))
      return;
    std::set<std::string> seen;
    for (size_t i = 0; i < m.size(); ++i) {
      const node k = m.key_at(i);
      auto dc = key_text(k);
      if (!dc) {
        error(k, mf, "expected a datacenter name as the key");
        continue;
      }
      if (!seen.insert(*dc).second) {
        error(k, join(mf, *dc), "duplicate key");
        continue;
      }
      if (m.value_at(i).is_null()) {
        error(m.value_at(i), join(mf, *dc), std::string(empty_value_message));
        continue;
      }
      fn(*dc, m.value_at(i), join(mf, *dc), k);
    }
  };
  per_dc("backends", [&](const std::string& dc, const node& v, const std::string& f, const node& key) {
    std::vector<std::string> list;
    auto add = [&](const node& item, const std::string& itf) {
      if (!item.is_scalar()) {
        error(item, itf, "expected \"host:port\"");
        return;
      }
      auto colon = item.text().rfind(':');
      auto port = colon == std::string::npos ? std::nullopt : to_int(item.text().substr(colon + 1));
      if (!port || *port < 1 || *port > 65535)
        error(item, itf, "expected \"host:port\" with a port 1..65535, got '" + item.text() + "'");
      else
        list.push_back(item.text());
    };
    if (v.is_sequence()) {
      for (size_t i = 0; i < v.size(); ++i)
        add(v[i], f + "[" + std::to_string(i) + "]");
    } else {
      add(v, f);
    }
    s.backends[dc] = std::move(list);
  });
  per_dc("lb_stats", [&](const std::string& dc, const node& v, const std::string& f, const node& key) {
    if (!v.is_scalar()) {
      error(v, f, "expected a string like haproxy:/run/haproxy/admin.sock");
      return;
    }
    const std::string& spec = v.text();
    if (!(spec.starts_with("haproxy:") || spec.starts_with("haproxy-csv:") || spec.starts_with("nginx:")))
      error(v, f, "unknown stats source '" + spec + "' (allowed prefixes: haproxy:, haproxy-csv:, nginx:)");
    else
      s.lb_stats[dc] = spec;
  });
  per_dc("processes", [&](const std::string& dc, const node& v, const std::string& f, const node& key) {
    std::vector<std::string> names;
    if (v.is_scalar())
      names.push_back(v.text());
    else if (v.is_sequence())
      for (size_t i = 0; i < v.size(); ++i) {
        const node item = v[i];
        if (item.is_scalar())
          names.push_back(item.text());
        else
          error(item, f + "[" + std::to_string(i) + "]", "expected a process name");
      }
    else
      error(v, f, "expected a process name or a list of them");
    s.processes[dc] = std::move(names);
  });
  if (find_service(s.name))
    error(n, join(field, "name"), "duplicate service name '" + s.name + "'");
  add(service_index_, cfg_.services, std::move(s));
}

} // namespace gtmesh::config_loading
