#include "core/routing/state_file.hpp"

#include "core/config/duration.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <ctime>
#include <fstream>
#include <sstream>

namespace gtmesh {

std::optional<int64_t> parse_time_ms(std::string_view text) {
  int64_t ms = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec == std::errc{} && p == text.data() + text.size())
    return ms;
  std::tm tm{};
  std::string s(text);
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || (*end != 'Z' && *end != '\0') || (*end == 'Z' && end[1] != '\0'))
    return std::nullopt;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

std::shared_ptr<measurement_view> empty_view(const routing_plan& plan) {
  auto v = std::make_shared<measurement_view>(plan.layout);
  v->finish();
  return v;
}

namespace {

class state_reader {
public:
  state_reader(std::string file, const routing_plan& plan) : file_(std::move(file)), plan_(plan) {}

  state_load_result run(std::string_view text, int64_t default_now) {
    state_load_result res;
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::ParserException& e) {
      res.errors.push_back(config_error{file_, e.mark.line + 1, e.mark.column + 1, "", "YAML syntax: " + e.msg});
      return res;
    }
    now_ = default_now;
    view_ = std::make_shared<measurement_view>(plan_.layout);
    if (root && !root.IsNull()) {
      if (!root.IsMap()) {
        error(root, "", "expected a mapping");
      } else {
        for (auto it = root.begin(); it != root.end(); ++it) {
          std::string k = it->first.Scalar();
          if (k != "now" && k != "hosts" && k != "services" && k != "clients" && k != "endpoints" && k != "drained")
            error(it->first, k, "unknown key (allowed: now, hosts, services, clients, endpoints, drained)");
        }
        if (auto n = root["now"]) {
          auto t = n.IsScalar() ? parse_time_ms(n.Scalar()) : std::nullopt;
          if (!t)
            error(n, "now", "expected a UTC time like 2026-11-29T12:00:00Z or Unix milliseconds");
          else
            now_ = *t;
        }
        read_hosts(root["hosts"]);
        read_services(root["services"]);
        read_clients(root["clients"]);
        read_endpoints(root["endpoints"]);
        read_drained(root["drained"]);
      }
    }
    view_->finish();
    res.now_ms = now_;
    res.errors = std::move(errors_);
    if (res.errors.empty())
      res.view = view_;
    return res;
  }

private:
  std::string file_;
  const routing_plan& plan_;
  std::shared_ptr<measurement_view> view_;
  int64_t now_ = 0;
  config_errors errors_;

  void error(const YAML::Node& n, const std::string& field, std::string msg) {
    auto m = n.Mark();
    errors_.push_back(config_error{file_, m.line + 1, m.column + 1, field, std::move(msg)});
  }

  bool map_at(const YAML::Node& n, const std::string& field) {
    if (!n || n.IsNull())
      return false;
    if (!n.IsMap()) {
      error(n, field, "expected a mapping");
      return false;
    }
    return true;
  }

  /// A value: 3, up, down, or {value: V, age: 5s}.
  bool value_of(const YAML::Node& n, const std::string& field, double& value, int64_t& at) {
    YAML::Node v = n;
    at = now_;
    if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it)
        if (it->first.Scalar() != "value" && it->first.Scalar() != "age")
          error(it->first, field + "." + it->first.Scalar(), "unknown key (allowed: value, age)");
      v.reset(n["value"]);
      if (auto a = n["age"]) {
        auto ms = a.IsScalar() ? parse_duration_ms(a.Scalar()) : std::nullopt;
        if (!ms) {
          error(a, field + ".age", "expected a duration such as 5s or 2m");
          return false;
        }
        at = now_ - *ms;
      }
    }
    if (!v || !v.IsScalar()) {
      error(n, field, "expected a number, up or down");
      return false;
    }
    const std::string& s = v.Scalar();
    if (s == "up") {
      value = 1;
      return true;
    }
    if (s == "down") {
      value = 0;
      return true;
    }
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || p != s.data() + s.size()) {
      error(v, field, "expected a number, up or down, got '" + s + "'");
      return false;
    }
    return true;
  }

  uint32_t dc_of(const YAML::Node& key, const std::string& field) {
    uint32_t dc = plan_.find_dc(key.Scalar());
    if (dc == no_index)
      error(key, field, "unknown datacenter '" + key.Scalar() + "'");
    return dc;
  }

  template <class Set>
  void read_metrics(const YAML::Node& n, const std::string& field, source src, Set&& set) {
    if (!map_at(n, field))
      return;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string name = it->first.Scalar();
      auto m = parse_metric(src, name);
      if (!m) {
        error(it->first, field + "." + name,
              "unknown " + std::string(to_string(src)) + " metric (allowed: " + std::string(metric_names(src)) + ")");
        continue;
      }
      double value;
      int64_t at;
      if (value_of(it->second, field + "." + name, value, at))
        set(*m, value, at);
    }
  }

  void read_hosts(const YAML::Node& n) {
    if (!map_at(n, "hosts"))
      return;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string f = "hosts." + it->first.Scalar();
      uint32_t dc = dc_of(it->first, f);
      if (dc == no_index)
        continue;
      read_metrics(it->second, f, source::host,
                   [&](metric_id m, double v, int64_t at) { view_->set_host(dc, m, v, at); });
    }
  }

  void read_services(const YAML::Node& n) {
    if (!map_at(n, "services"))
      return;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string f = "services." + it->first.Scalar();
      uint32_t svc = plan_.find_service(it->first.Scalar());
      if (svc == no_index) {
        error(it->first, f, "unknown service '" + it->first.Scalar() + "'");
        continue;
      }
      if (!map_at(it->second, f))
        continue;
      for (auto dit = it->second.begin(); dit != it->second.end(); ++dit) {
        std::string df = f + "." + dit->first.Scalar();
        uint32_t dc = dc_of(dit->first, df);
        if (dc == no_index)
          continue;
        read_metrics(dit->second, df, source::service,
                     [&](metric_id m, double v, int64_t at) { view_->set_service(svc, dc, m, v, at); });
      }
    }
  }

  void read_clients(const YAML::Node& n) {
    if (!map_at(n, "clients"))
      return;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string f = "clients." + it->first.Scalar();
      auto prefix = ip_prefix::parse(it->first.Scalar());
      if (!prefix) {
        error(it->first, f, "not a CIDR prefix: '" + it->first.Scalar() + "'");
        continue;
      }
      if (!map_at(it->second, f))
        continue;
      for (auto dit = it->second.begin(); dit != it->second.end(); ++dit) {
        std::string df = f + "." + dit->first.Scalar();
        uint32_t dc = dc_of(dit->first, df);
        if (dc == no_index)
          continue;
        read_metrics(dit->second, df, source::client,
                     [&](metric_id m, double v, int64_t at) { view_->set_client(*prefix, dc, m, v, at); });
      }
    }
  }

  void read_endpoints(const YAML::Node& n) {
    if (!map_at(n, "endpoints"))
      return;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string key = it->first.Scalar();
      std::string f = "endpoints." + key;
      uint32_t mon = plan_.find_monitor(key);
      if (mon == no_index) {
        error(it->first, f, "no monitored endpoint '" + key + "' (use profile/endpoint of an external endpoint with a monitor)");
        continue;
      }
      double value;
      int64_t at;
      if (value_of(it->second, f, value, at))
        view_->set_endpoint(mon, value, at);
    }
  }

  void read_drained(const YAML::Node& n) {
    if (!n || n.IsNull())
      return;
    if (!n.IsSequence()) {
      error(n, "drained", "expected a list of DC names");
      return;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      uint32_t dc = dc_of(n[i], "drained[" + std::to_string(i) + "]");
      if (dc != no_index)
        view_->set_drained(dc, true);
    }
  }
};

} // namespace

state_load_result load_state_text(std::string_view yaml, const std::string& file, const routing_plan& plan,
                                  int64_t default_now_ms) {
  state_reader r(file, plan);
  return r.run(yaml, default_now_ms);
}

state_load_result load_state_file(const std::string& path, const routing_plan& plan, int64_t default_now_ms) {
  std::ifstream in(path);
  if (!in) {
    state_load_result r;
    r.errors.push_back(config_error{path, 0, 0, "", "cannot open state file"});
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return load_state_text(ss.str(), path, plan, default_now_ms);
}

} // namespace gtmesh
