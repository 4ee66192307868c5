// Fields records and profiles share: criterion, metric reference, balance
// and on_all_down.

#include "core/config/loader/loader.hpp"

namespace gtmesh::config_loading {

std::optional<criterion> loader::parse_criterion(const node& n, const std::string& field) {
  criterion c;
  if (n.is_scalar()) {
    if (n.text() == "lowest")
      c.kind = criterion_kind::lowest;
    else if (n.text() == "highest")
      c.kind = criterion_kind::highest;
    else {
      error(n, field, "unknown criterion '" + n.text() + "' (allowed: lowest, highest, {equals: T}, "
                      "{within: {target: T|best, margin: M|P%}})");
      return std::nullopt;
    }
    return c;
  }
  if (!is_map(n, field))
    return std::nullopt;
  const size_t errors_before = errors_.size();
  check_keys(n, field, config_fields::keys_of("criterion"));
  if (errors_.size() != errors_before)
    return std::nullopt; // a typo such as {equal: T}: its key error says it all
  if (n.size() != 1) {
    error(n, field, "a criterion has exactly one of equals, within");
    return std::nullopt;
  }
  if (node e = child(n, "equals")) {
    c.kind = criterion_kind::equals;
    auto v = number_node(e, join(field, "equals"));
    if (!v)
      return std::nullopt;
    c.target = *v;
    return c;
  }
  node w = child(n, "within");
  std::string wf = join(field, "within");
  if (!is_map(w, wf))
    return std::nullopt;
  check_keys(w, wf, config_fields::keys_of("within"));
  c.kind = criterion_kind::within;
  node t = child(w, "target");
  if (!t) {
    error(w, join(wf, "target"), "required field is missing");
    return std::nullopt;
  }
  if (t.is_scalar() && t.text() == "best") {
    c.target_is_best = true;
  } else {
    auto v = number_node(t, join(wf, "target"));
    if (!v)
      return std::nullopt;
    c.target = *v;
  }
  node m = child(w, "margin");
  if (!m || !m.is_scalar()) {
    error(m ? m : w, join(wf, "margin"), "required: an absolute margin (5) or a percentage (10%)");
    return std::nullopt;
  }
  if (!parse_margin(m, join(wf, "margin"), c.margin, c.margin_is_percent))
    return std::nullopt;
  return c;
}

bool loader::parse_margin(const node& m, const std::string& field, double& value, bool& percent) {
  std::string ms = m.is_scalar() ? m.text() : std::string();
  percent = !ms.empty() && ms.back() == '%';
  if (percent)
    ms.pop_back();
  auto mv = to_double(ms);
  if (!mv || *mv < 0) {
    error(m, field, "expected a non-negative number or percentage, got '" + m.text() + "'");
    return false;
  }
  value = *mv;
  return true;
}

void loader::parse_protect(const node& map, const std::string& field, monitor_protection& out) {
  node n = child(map, "protect");
  if (!n || n.is_null())
    return;
  const std::string f = join(field, "protect");
  if (n.is_scalar()) {
    if (auto on = to_bool(n.text()))
      out.enabled = *on;
    else
      error(n, f, "expected true, false or a map {max_flip_fraction, window, hold}, got '" + n.text() + "'");
    return;
  }
  if (!is_map(n, f))
    return;
  check_keys(n, f, config_fields::keys_of("protect"));
  out.enabled = true;
  if (auto v = number(n, "max_flip_fraction", f)) {
    if (*v < 0 || *v >= 1)
      error(child(n, "max_flip_fraction"), join(f, "max_flip_fraction"),
            "expected a fraction from 0 up to (not including) 1, got " + child(n, "max_flip_fraction").text());
    else
      out.max_flip_fraction = *v;
  }
  if (auto v = duration(n, "window", f, 1'000, 3'600'000))
    out.window_ms = *v;
  if (auto v = duration(n, "hold", f, 1'000, 86'400'000))
    out.hold_ms = *v;
}

std::optional<metric_ref> loader::parse_metric_ref(const node& map, const std::string& field, bool allow_client) {
  metric_ref r;
  auto src = str(map, "source", field, true);
  auto met = str(map, "metric", field, true);
  if (!src || !met)
    return std::nullopt;
  auto s = parse_source(*src);
  if (!s || *s == source::endpoint || (!allow_client && *s == source::client)) {
    error(child(map, "source"), join(field, "source"),
          "unknown source '" + *src + "' (allowed: host, service" + (allow_client ? ", client)" : ")"));
    return std::nullopt;
  }
  r.src = *s;
  if (*s == source::client && (*met == "rum_latency" || *met == "rum_availability")) {
    r.metric = metric_id::client_rtt; // the rank direction: lower is better for latency
    r.rum = *met == "rum_latency" ? 1 : 2;
    if (child(map, "service"))
      error(child(map, "service"), join(field, "service"), "only service metrics take a service");
    return r;
  }
  auto m = parse_metric(*s, *met);
  if (!m) {
    error(child(map, "metric"), join(field, "metric"),
          "unknown " + *src + " metric '" + *met + "' (allowed: " + std::string(metric_names(*s)) +
            (*s == source::client ? ", rum_latency, rum_availability" : "") + ")");
    return std::nullopt;
  }
  r.metric = *m;
  if (r.src == source::service) {
    auto svc = str(map, "service", field, true);
    if (!svc)
      return std::nullopt;
    if (!find_service(*svc)) {
      error(child(map, "service"), join(field, "service"), "unknown service '" + *svc + "'");
      return std::nullopt;
    }
    r.service = *svc;
  } else if (child(map, "service")) {
    error(child(map, "service"), join(field, "service"), "only service metrics take a service");
  }
  return r;
}

std::optional<balance_kind> loader::parse_balance(const node& map, const std::string& field) {
  auto s = str(map, "balance", field);
  if (!s)
    return balance_kind::all;
  static const std::pair<std::string_view, balance_kind> names[] = {
    {"all", balance_kind::all},
    {"top1", balance_kind::top1},
    {"top2", balance_kind::top2},
    {"top3", balance_kind::top3},
    {"round_robin", balance_kind::round_robin},
    {"weighted_round_robin", balance_kind::weighted_round_robin},
    {"random", balance_kind::random},
    {"weighted_random", balance_kind::weighted_random},
    {"closest", balance_kind::closest},
  };
  for (auto& [n, b] : names)
    if (*s == n)
      return b;
  error(child(map, "balance"), join(field, "balance"),
        "unknown balance '" + *s +
          "' (allowed: all, top1, top2, top3, round_robin, weighted_round_robin, random, weighted_random, closest)");
  return std::nullopt;
}

std::optional<all_down_action> loader::parse_all_down(const node& map, const std::string& field) {
  auto s = str(map, "on_all_down", field);
  if (!s)
    return std::nullopt;
  if (*s == "fail_safe")
    return all_down_action::fail_safe;
  if (*s == "fail_open")
    return all_down_action::fail_open;
  if (*s == "nodata")
    return all_down_action::nodata;
  error(child(map, "on_all_down"), join(field, "on_all_down"),
        "unknown value '" + *s + "' (allowed: fail_safe, fail_open, nodata)");
  return std::nullopt;
}

} // namespace gtmesh::config_loading
