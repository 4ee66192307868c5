#include "core/config/config_model.hpp"

#include <algorithm>

#include <cstdio>

namespace gtmesh {

bool probe_sets_header(std::string_view lower_name) noexcept {
  for (std::string_view own : {"host", "content-length", "transfer-encoding", "connection", "te", "trailer", "upgrade",
                               "expect", "keep-alive"})
    if (lower_name == own)
      return true;
  return false;
}

record::record(const record& other)
    : name(other.name), type(other.type), ttl(other.ttl), min_ttl(other.min_ttl), mode(other.mode),
      plain(other.plain), dc(other.dc), static_rules(other.static_rules),
      profile(other.profile), alias(other.alias ? std::make_unique<alias_policy>(*other.alias) : nullptr),
      where(other.where) {}

record& record::operator=(const record& other) {
  if (this != &other)
    *this = record(other);
  return *this;
}

namespace {

template <class T>
const T* find_named(const std::vector<T>& list, std::string_view name) {
  for (const auto& x : list)
    if (x.name == name)
      return &x;
  return nullptr;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

} // namespace

const datacenter* config::find_dc(std::string_view name) const {
  return find_named(datacenters, name);
}
const service* config::find_service(std::string_view name) const {
  return find_named(services, name);
}
const profile* config::find_profile(std::string_view name) const {
  return find_named(profiles, name);
}
const probe_settings* config::find_probe(std::string_view name) const {
  return find_named(probes, name);
}

std::string resolver_settings::server::text() const {
  return address.v4() ? address.to_string() + ":" + std::to_string(port)
                      : "[" + address.to_string() + "]:" + std::to_string(port);
}

std::string_view to_string(transfer_view v) noexcept {
  switch (v) {
    case transfer_view::current:
      return "current";
    case transfer_view::fail_safe:
      return "fail_safe";
    case transfer_view::omit:
      return "omit";
  }
  return "?";
}

bool transfer_settings::allows(const ip_address& address, int key, std::span<const std::string> tls_names) const noexcept {
  const ip_key k = address.key();
  for (const transfer_rule& r : allow)
    if ((r.any_address || (r.from.v4 == address.v4() && r.from.first <= k && k <= r.from.last)) &&
        (r.key < 0 || r.key == key) &&
        (r.tls_client.empty() || std::find(tls_names.begin(), tls_names.end(), r.tls_client) != tls_names.end()))
      return true;
  return false;
}

std::string criterion::text() const {
  switch (kind) {
    case criterion_kind::lowest:
      return "lowest";
    case criterion_kind::highest:
      return "highest";
    case criterion_kind::equals:
      return "equals " + number_text(target);
    case criterion_kind::within:
      return "within " + number_text(margin) + (margin_is_percent ? "%" : "") + " of " +
             (target_is_best ? std::string("best") : number_text(target));
  }
  return "?";
}

std::string switch_damping::text() const {
  std::string out;
  if (margin > 0)
    out = "switch_margin " + number_text(margin) + (margin_is_percent ? "%" : "");
  if (hold_ms > 0)
    out += (out.empty() ? "" : ", ") + std::string("hold_down ") +
           (hold_ms % 60'000 == 0 ? std::to_string(hold_ms / 60'000) + "m"
                                  : number_text(static_cast<double>(hold_ms) / 1000.0) + "s");
  return out;
}

std::string monitor_protection::text() const {
  auto span = [](int64_t ms) {
    return ms % 60'000 == 0 ? std::to_string(ms / 60'000) + "m" : number_text(static_cast<double>(ms) / 1000.0) + "s";
  };
  return "protect: more than " + number_text(max_flip_fraction * 100.0) + "% turn unavailable within " +
         span(window_ms) + ", hold " + span(hold_ms);
}

std::string metric_ref::text() const {
  if (rum)
    return rum == 1 ? "client rum_latency" : "client rum_availability";
  std::string out(to_string(src));
  if (src == source::service)
    out += " " + service;
  return out + " " + std::string(info(metric).name);
}

std::string_view to_string(balance_kind b) noexcept {
  switch (b) {
    case balance_kind::all:
      return "all";
    case balance_kind::top1:
      return "top1";
    case balance_kind::top2:
      return "top2";
    case balance_kind::top3:
      return "top3";
    case balance_kind::round_robin:
      return "round_robin";
    case balance_kind::weighted_round_robin:
      return "weighted_round_robin";
    case balance_kind::random:
      return "random";
    case balance_kind::weighted_random:
      return "weighted_random";
    case balance_kind::closest:
      return "closest";
  }
  return "?";
}

std::string_view to_string(all_down_action a) noexcept {
  switch (a) {
    case all_down_action::fail_safe:
      return "fail_safe";
    case all_down_action::fail_open:
      return "fail_open";
    case all_down_action::nodata:
      return "nodata";
  }
  return "?";
}

std::string_view to_string(endpoint_kind k) noexcept {
  switch (k) {
    case endpoint_kind::external:
      return "external";
    case endpoint_kind::dc:
      return "dc";
    case endpoint_kind::nested:
      return "nested";
    case endpoint_kind::alias:
      return "alias";
  }
  return "?";
}

std::string_view to_string(endpoint_status s) noexcept {
  switch (s) {
    case endpoint_status::enabled:
      return "enabled";
    case endpoint_status::disabled:
      return "disabled";
    case endpoint_status::stopped:
      return "stopped";
    case endpoint_status::always_serve:
      return "always_serve";
  }
  return "?";
}

} // namespace gtmesh
