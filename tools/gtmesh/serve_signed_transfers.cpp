#include "tools/gtmesh/serve_signed_transfers.hpp"

#include "core/dns/transfer/signed_view.hpp"
#include "core/dns/transfer/zone_transfer.hpp"

#include <algorithm>
#include <memory>

namespace gtmesh::cli {

namespace {

constexpr int64_t generation_epoch_ms = 1767225600000; ///< 2026-01-01T00:00:00Z

} // namespace

snapshot_ptr serve_signed_transfers::update(const snapshot_ptr& current, int64_t eval_ms, int64_t wall_ms,
                                            uint64_t generation, std::string& log) {
  const routing_plan& plan = *current->plan;
  const auto wall_s = static_cast<uint32_t>(wall_ms / 1000);
  committed_views next = views_;
  bool changed = false;
  std::string problems;
  // A zone that no longer signs keeps its generation (its serial does not
  // fall back) and none of the records signed for it.
  for (auto& [name, view] : next) {
    const auto z = std::find_if(plan.zones.begin(), plan.zones.end(),
                                [&](const zone_plan& zp) { return zp.source && zp.source->name == name; });
    if (view.records && (z == plan.zones.end() || !z->signs_transfer)) {
      view.records.reset();
      changed = changed || (z != plan.zones.end() && z->committed_view);
    }
  }
  for (uint32_t zi = 0; zi < plan.zones.size(); ++zi) {
    const zone_plan& z = plan.zones[zi];
    if (!z.signs_transfer)
      continue;
    const std::string& name = z.source->name;
    std::vector<dns::transfer_record> dynamic = dns::dynamic_records(*current, zi, eval_ms);
    committed_view& held = next[name];
    if (held.records && held.config_version == plan.version &&
        dns::signed_view_current(plan, zi, *held.records, dynamic, wall_s))
      continue;
    if (auto f = failed_.find(name);
        f != failed_.end() && f->second.first == plan.version && static_cast<int32_t>(wall_s - f->second.second) < 0)
      continue; // failed for this config a moment ago: said once, tried again a minute later
    // The serial: the explicit soa.serial (or 0) plus the signing time in
    // tenths of a second since 2026-01-01 (modulo 2^32: RFC 1982 compares
    // serials up to 6.8 years apart), at least one above the last: not the
    // reload count, which starts again with the process.
    uint32_t serial = z.source->soa.serial +
                      static_cast<uint32_t>(wall_ms > generation_epoch_ms ? (wall_ms - generation_epoch_ms) / 100 : 0);
    if (auto last = last_serial_.find(name);
        last != last_serial_.end() && static_cast<int32_t>(serial - last->second) <= 0)
      serial = last->second + 1;
    dns::signed_view made = dns::sign_transfer_view(*current, zi, std::move(dynamic), serial, wall_s);
    if (!made.error.empty()) {
      problems += "zone " + name + ": its transfer could not be signed (not transferred; tried again in a "
                  "minute, or at the next reload): " + made.error + "\n";
      failed_[name] = {plan.version, wall_s + 60};
      // This plan is served without a signed view, under its own serial:
      // the next signed one goes above it.
      if (auto last = last_serial_.find(name);
          last == last_serial_.end() || static_cast<int32_t>(plan.soa_serial(zi) - last->second) > 0)
        last_serial_[name] = plan.soa_serial(zi);
      continue;
    }
    failed_.erase(name);
    auto records = std::make_shared<dns::packed_records>();
    records->assign(made.records);
    // compile_plan serves base + generation (modulo 2^32): this serial.
    const uint32_t base = plan.soa_serial(zi) - z.view_generation;
    held = committed_view{serial - base, plan.version, std::move(records)};
    last_serial_[name] = serial;
    changed = true;
  }
  snapshot_ptr out;
  if (changed) {
    compile_result compiled = compile_plan(plan.cfg, plan.version, &next);
    if (compiled.plan) {
      views_ = std::move(next);
      out = make_snapshot(std::move(compiled.plan), current->view, eval_ms, generation, current.get(), nullptr,
                          current->aliases, current->rum);
    } else {
      problems += "signed zone transfers: compiling the config again failed (" + compiled.error +
                  "); tried again in a minute, or at the next reload\n";
      for (const auto& [name, view] : next)
        if (!views_.count(name) || views_.at(name).generation != view.generation)
          failed_[name] = {plan.version, wall_s + 60};
    }
  }
  if (problems != last_said_) {
    last_said_ = problems;
    log = problems;
  }
  return out;
}

committed_views serve_signed_transfers::views_for_reload() const {
  committed_views out = views_;
  for (auto& [name, view] : out)
    view.records.reset(); // the generation alone: signed again for the new config before it is served
  return out;
}

} // namespace gtmesh::cli
