#include "core/decider/alias_hook.hpp"

#include "core/mesh/envelope.hpp"

#include <algorithm>

namespace gtmesh::decider {

bool alias_hook::tick(decider_core& core) {
  const active_config* c = core.config();
  if (c && (c->version != configured_version_ || c->hash != configured_hash_)) {
    configured_version_ = c->version;
    configured_hash_ = c->hash;
    std::vector<std::string> names;
    for (const auto& t : c->plan->alias_targets)
      if (std::find(names.begin(), names.end(), t.name) == names.end())
        names.push_back(t.name);
    if (!names.empty() || service_) {
      if (!service_)
        service_ = std::make_unique<alias_service>();
      service_->configure(c->cfg->resolver, names,
                          restored_ ? std::vector<stored_alias>{} : core.restored_aliases());
      restored_ = true;
    }
  }
  if (!service_)
    return false;
  auto state = service_->current();
  if (!state || (core.aliases() && core.aliases()->version == state->version))
    return false;
  core.set_aliases(std::move(state));
  return true;
}

void alias_hook::send_probes(const decider_core& core, const std::map<mesh::link_id, std::string>& agents,
                             const std::function<bool(mesh::link_id)>& understands,
                             const std::function<void(mesh::link_id, const std::vector<uint8_t>&)>& send,
                             const std::string& sender) {
  const active_config* c = core.config();
  std::vector<std::string> list = c ? alias_probe_list(*c->plan, core.aliases()) : std::vector<std::string>{};
  if (list != list_) {
    if (list.empty() && list_.empty())
      return;
    list_ = std::move(list);
    frame_ = mesh::frame(mesh::message_kind::request, sender, mesh::request_body{"alias-probes", list_, {}});
    sent_.clear();
  }
  if (frame_.empty())
    return;
  for (auto it = sent_.begin(); it != sent_.end();)
    it = agents.count(*it) ? std::next(it) : sent_.erase(it);
  for (const auto& [link, origin] : agents)
    if (!sent_.count(link) && understands(link)) {
      send(link, frame_);
      sent_.insert(link);
    }
}

bool config_needs_alias(const config& cfg) {
  if (cfg.resolver.configured())
    return true;
  for (const auto& p : cfg.profiles)
    for (const auto& e : p.endpoints)
      if (e.kind == endpoint_kind::alias)
        return true;
  for (const auto& z : cfg.zones)
    for (const auto& r : z.records)
      if (r.mode == record_mode::alias)
        return true;
  return false;
}

} // namespace gtmesh::decider
