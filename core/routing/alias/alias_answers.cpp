#include "core/routing/alias/alias_answers.hpp"

#include "core/routing/routing_snapshot.hpp"

#include <algorithm>

namespace gtmesh {

ip_address alias_answers::address(uint32_t i) const noexcept {
  const rdata_entry& e = rdata[i];
  const uint8_t* b = bytes.data() + e.offset;
  if (e.type == dns::rr_type::a)
    return ip_address::from_v4(uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3]);
  return ip_address::from_v6(b);
}

std::string routing_snapshot::answer_text(uint32_t id) const {
  if (id < plan->rdata.size())
    return plan->answer_text(id);
  if (!aliases || id - aliases->base >= aliases->rdata.size())
    return "?";
  return aliases->address(id - aliases->base).to_string();
}

std::shared_ptr<const alias_answers> build_alias_answers(
  const routing_plan& plan, const std::function<const alias_resolution*(uint32_t)>& resolution,
  const std::function<alias_health(uint32_t, const ip_address&)>& health, const alias_answers* previous) {
  auto out = std::make_shared<alias_answers>();
  out->base = static_cast<uint32_t>(plan.rdata.size());
  out->targets.resize(plan.alias_targets.size());
  for (uint32_t t = 0; t < plan.alias_targets.size(); ++t) {
    const alias_target_plan& tp = plan.alias_targets[t];
    alias_target_answers& row = out->targets[t];
    const alias_resolution* r = resolution(t);
    if (r) {
      row.known = r->known;
      row.ttl = r->ttl;
      row.resolved_at_ms = r->resolved_at_ms;
      row.failed_at_ms = r->failed_at_ms;
      row.failures = r->failures;
      row.last_failure = r->last_failure;
      row.explain = r->explain;
    }
    auto add = [&](const std::vector<ip_address>& list, bool v6, alias_run& run) {
      run.first = static_cast<uint32_t>(out->rdata.size());
      // At most max_answers of a family: an answer never holds more.
      for (size_t i = 0; i < list.size() && run.count < max_answers; ++i) {
        const ip_address& address = list[i];
        if (address.v4() == v6)
          continue;
        rdata_entry e;
        e.type = v6 ? dns::rr_type::aaaa : dns::rr_type::a;
        e.offset = static_cast<uint32_t>(out->bytes.size());
        e.length = v6 ? 16 : 4;
        uint8_t b[16];
        address.to_bytes(b);
        out->bytes.insert(out->bytes.end(), b, b + e.length);
        out->rdata.push_back(e);
        alias_health h;
        if (!tp.monitor.empty())
          h = health(t, address);
        else
          h.detail = "not monitored";
        out->healthy.push_back(h.healthy ? 1 : 0);
        out->health_detail.push_back(std::move(h.detail));
        out->valid_until_ms = std::min(out->valid_until_ms, h.until_ms);
        ++run.count;
        run.healthy += h.healthy ? 1 : 0;
      }
    };
    if (r && r->known) {
      add(r->a, false, row.a);
      add(r->aaaa, true, row.aaaa);
    }
    // The stamp moves when anything a decision or an explanation reads moved.
    const alias_target_answers* before = previous ? previous->target(t) : nullptr;
    bool same = before && before->known == row.known && before->ttl == row.ttl && before->explain == row.explain &&
                before->resolved_at_ms == row.resolved_at_ms && before->failures == row.failures &&
                before->a.count == row.a.count && before->aaaa.count == row.aaaa.count &&
                before->a.healthy == row.a.healthy && before->aaaa.healthy == row.aaaa.healthy;
    for (const alias_run* run : {&row.a, &row.aaaa}) {
      if (!same)
        break;
      const alias_run& old = run == &row.a ? before->a : before->aaaa;
      for (uint16_t i = 0; same && i < run->count; ++i) {
        const rdata_entry& now = out->rdata[run->first + i];
        const rdata_entry& was = previous->rdata[old.first + i];
        same = std::equal(out->bytes.begin() + now.offset, out->bytes.begin() + now.offset + now.length,
                          previous->bytes.begin() + was.offset, previous->bytes.begin() + was.offset + was.length) &&
               out->healthy[run->first + i] == previous->healthy[old.first + i] &&
               out->health_detail[run->first + i] == previous->health_detail[old.first + i];
      }
    }
    row.stamp = same ? before->stamp : (before ? before->stamp + 1 : 1);
  }
  return out;
}

} // namespace gtmesh
