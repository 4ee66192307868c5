#include "core/routing/common/rum_evidence.hpp"

#include <cmath>
#include <cstdio>

namespace gtmesh {

rum_level_choice rum_choose_level(route_context& rc, std::span<const uint64_t> targets,
                                  std::span<const uint8_t> considered, const rum_steering& s,
                                  std::span<const rum::rum_entry*> out) noexcept {
  rum_level_choice c;
  const rum::rum_table* t = rc.rum;
  for (auto& e : out)
    e = nullptr;
  if (!t)
    return c;
  const uint32_t now_s = static_cast<uint32_t>(rc.ctx.now_ms / 1000);
  auto try_level = [&](rum::key_level level, uint64_t key) {
    auto row = t->row(level, key);
    if (row.count == 0)
      return false;
    bool any = false;
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!considered[i])
        continue;
      for (const rum::rum_entry& e : row.entries())
        if (e.target == targets[i]) {
          if (rum_usable(&e, s, now_s)) {
            out[i] = &e;
            any = true;
          }
          break;
        }
    }
    if (!any)
      return false;
    c = rum_level_choice{true, level, key};
    return true;
  };
  const ip_address& a = rc.query.client.address;
  const uint64_t net = rum::network_key(a, t->trunc());
  if (!rc.query.client.has_ecs && try_level(rum::key_level::resolver, net)) {
    rc.out.widen_scope(rum::network_length(a, t->trunc()));
    return c;
  }
  rc.out.widen_scope(rum::network_length(a, t->trunc()));
  if (try_level(rum::key_level::prefix, net))
    return c;
  if (!rc.plan.geo)
    return c;
  const geo_info& g = rc.geo();
  // The client's autonomous system (with its country): an ASN database
  // lookup, made only here, once the client's own network had nothing.
  if (rc.plan.geo->has_asn())
    if (const uint32_t asn = rc.plan.geo->asn(a);
        asn && try_level(rum::key_level::asn_country, rum::asn_country_key(asn, rum::code16(g.country))))
      return c;
  if (g.country[0] && try_level(rum::key_level::country, rum::code16(g.country)))
    return c;
  if (g.continent[0] && try_level(rum::key_level::continent, rum::code16(g.continent)))
    return c;
  return c;
}

std::string rum_level_text(const rum::rum_table& table, const rum_level_choice& c) {
  std::string out(rum::to_string(c.level));
  out += " ";
  if (c.level == rum::key_level::prefix || c.level == rum::key_level::resolver)
    out += rum::network_text(c.key, table.trunc());
  else
    out += rum::level_key_text(c.level, c.key);
  return out;
}

std::string rum_evidence_text(const rum::rum_entry& e, uint32_t now_s) {
  char buf[160];
  const long age = now_s > e.last_s ? static_cast<long>(now_s - e.last_s) : 0;
  if (std::isnan(e.p50_ms))
    std::snprintf(buf, sizeof buf, "n %.1f, no latency, availability %.0f%%, age %lds", e.samples,
                  e.availability * 100.0, age);
  else
    std::snprintf(buf, sizeof buf, "n %.1f, p50 %.1f ms, p90 %.1f ms, availability %.0f%%, age %lds", e.samples,
                  e.p50_ms, e.p90_ms, e.availability * 100.0, age);
  return buf;
}

} // namespace gtmesh
