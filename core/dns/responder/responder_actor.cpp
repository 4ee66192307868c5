#include "core/dns/responder/responder_actor.hpp"

#include "core/runtime/exit_on_exception.hpp"

#include <caf/all.hpp>

#include <chrono>

namespace gtmesh::dns {

namespace {

constexpr auto reclaim_interval = std::chrono::milliseconds(100);

std::string prefix_text(const unmeasured_client& c) {
  return c.address.to_string() + "/" + std::to_string(c.prefix_length);
}

} // namespace

responder_actor::behavior_type responder_actor_impl(responder_actor::stateful_pointer<responder_state> self,
                                                    responder_handoff handoff) {
  exit_on_unexpected_exception(self, "DNS responder");
  self->state.responder = std::move(*handoff.box);
  auto schedule_reclaim = [self] {
    if (self->state.reclaim_pending)
      return;
    self->state.reclaim_pending = true;
    self->delayed_send(self, reclaim_interval, reclaim_atom::value);
  };
  auto publish = [self, schedule_reclaim](snapshot_ptr& snapshot, int64_t fixed_now_ms) -> uint64_t {
    if (!self->state.responder)
      return 0;
    uint64_t generation = self->state.responder->publish(std::move(snapshot), fixed_now_ms);
    if (self->state.responder->reclaim() > 0)
      schedule_reclaim();
    return generation;
  };
  return {
    [publish](publish_atom, snapshot_ptr& snapshot) -> uint64_t { return publish(snapshot, 0); },
    [publish](publish_atom, snapshot_ptr& snapshot, int64_t fixed_now_ms) -> uint64_t {
      return publish(snapshot, fixed_now_ms);
    },
    [self](counters_atom) -> dns_counters {
      return self->state.responder ? self->state.responder->counters() : dns_counters{};
    },
    [self](unmeasured_atom) -> std::vector<std::string> {
      std::vector<std::string> out;
      if (!self->state.responder)
        return out;
      unmeasured_batch batch;
      self->state.responder->drain_unmeasured(batch);
      out.reserve(batch.size());
      for (const auto& c : batch)
        out.push_back(prefix_text(c));
      return out;
    },
    [self, schedule_reclaim](reclaim_atom) {
      self->state.reclaim_pending = false;
      if (self->state.responder && self->state.responder->reclaim() > 0)
        schedule_reclaim();
    },
    [self](stop_atom) {
      if (self->state.responder)
        self->state.responder->stop();
      self->quit();
    },
  };
}

} // namespace gtmesh::dns
