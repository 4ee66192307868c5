#include "tools/gtmesh/serve_signed_transfers.hpp"

#include "core/dns/transfer/signed_view.hpp"
#include "core/dns/transfer/zone_transfer.hpp"

#include <algorithm>
#include <memory>

namespace gtmesh::cli {

namespace {

constexpr uint32_t generation_epoch_s = 1767225600; ///< 2026-01-01T00:00:00Z

} // namespace

snapshot_ptr serve_signed_transfers::update(const snapshot_ptr& current, int64_t eval_ms, uint32_t wall_s,
                                            uint64_t generation, std::string& log) {
  const routing_plan& plan = *current->plan;
  committed_views next = views_;
  bool changed = false;
  std::string problems;
  for (uint32_t zi = 0; zi < plan.zones.size(); ++zi) {
    const zone_plan& z = plan.zones[zi];
    if (!z.signs_transfer)
      continue;
    std::vector<dns::transfer_record> dynamic = dns::dynamic_records(*current, zi, eval_ms);
    committed_view& held = next[z.source->name];
    if (held.records && held.config_version == plan.version &&
        dns::signed_view_current(plan, zi, *held.records, dynamic, wall_s))
      continue;
    const uint32_t view_generation =
      std::max(held.generation + 1, wall_s > generation_epoch_s ? wall_s - generation_epoch_s : 0);
    const uint32_t serial = plan.soa_serial(zi) - z.view_generation + view_generation;
    dns::signed_view made = dns::sign_transfer_view(*current, zi, std::move(dynamic), serial, wall_s);
    if (!made.error.empty()) {
      problems += "zone " + z.source->name + ": its transfer could not be signed: " + made.error + "\n";
      continue;
    }
    auto records = std::make_shared<dns::packed_records>();
    records->assign(made.records);
    held = committed_view{view_generation, plan.version, std::move(records)};
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
      problems += "signed zone transfers: compiling the config again failed (" + compiled.error + "); retried\n";
    }
  }
  if (problems != last_said_) {
    last_said_ = problems;
    log = problems;
  }
  return out;
}

} // namespace gtmesh::cli
