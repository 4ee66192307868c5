#include "core/decider/rum_hook.hpp"

#include "core/rum/rum_persist.hpp"

#include <algorithm>
#include <chrono>

namespace gtmesh::decider {

bool rum_hook::tick(decider_core& core, int64_t now_ms) {
  const active_config* c = core.config();
  if (!c)
    return false;
  if (c->version != configured_version_ || c->hash != configured_hash_) {
    service_->configure(*c->cfg, c->plan ? c->plan->geo : nullptr);
    configured_version_ = c->version;
    configured_hash_ = c->hash;
  }
  if (!restored_) {
    restored_ = true;
    rum::decode_cells(core.take_restored_rum(), *service_);
  }
  if (!c->cfg->rum.configured()) {
    if (core.rum()) {
      core.set_rum(nullptr);
      return true;
    }
    return false;
  }
  bool published = false;
  if (now_ms >= service_->next_publish_ms()) {
    core.set_rum(service_->publish(now_ms));
    published = true;
  }
  const int64_t every = std::max<int64_t>(10'000, static_cast<int64_t>(service_->stats().cells / 20));
  if (now_ms - persisted_ms_ >= every && service_->take_dirty()) {
    core.persist_rum(rum::encode_cells(*service_));
    persisted_ms_ = now_ms;
  }
  return published;
}

std::vector<std::string> rum_hook::outgoing() {
  std::vector<std::string> out;
  for (const auto& s : service_->take_outbox())
    for (auto& line : rum::encode_shared(s))
      out.push_back(std::move(line));
  // The resolver join's notes: a beacon may reach another decider than the
  // view's DNS query did.
  for (const auto& n : service_->joins()->take_new())
    out.push_back(rum::encode_note(n));
  return out;
}

size_t rum_hook::incoming(const std::vector<std::string>& args) {
  std::vector<rum::rum_sample> samples;
  samples.reserve(args.size());
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
  size_t notes = 0;
  for (const auto& a : args) {
    rum::rum_sample s;
    rum::join_note n;
    bool is_note = false;
    if (!rum::decode_shared(a, s, n, is_note))
      continue;
    if (is_note) {
      service_->joins()->apply_peer(n, now_ms);
      ++notes;
    } else {
      samples.push_back(std::move(s));
    }
  }
  service_->apply_peer(samples);
  return samples.size() + notes;
}

bool config_needs_rum(const config& cfg) {
  if (cfg.rum.configured())
    return true;
  for (const auto& p : cfg.profiles)
    if (p.rum.enabled)
      return true;
  return false;
}

} // namespace gtmesh::decider
