#include "agents/runtime/agent_runner.hpp"

#include "core/runtime/exit_on_exception.hpp"

#include "agents/agent_types.hpp"

#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <mutex>

namespace gtmesh::agents {

namespace {

/// Where the I/O thread leaves a finished round for the actor, and how it
/// tells the actor. The runner clears `notify` (which holds the actor handle)
/// before the actor system goes away, so a round still in flight on the I/O
/// thread can finish later without touching a dead system.
struct task_slot {
  std::shared_ptr<measurement_task> task;
  std::mutex mutex;
  measurement_batch completed;
  std::function<void(uint64_t)> notify;
};

struct task_actor_state {
  // A user-declared constructor keeps the state a non-aggregate: in C++20,
  // CAF 0.17 would otherwise construct it from the actor pointer
  // (deps-notes section 2).
  task_actor_state() = default;

  std::shared_ptr<task_slot> slot;
  const agent_clock* clock = nullptr;
  measurement_stamper* stamper = nullptr;
  bool once = false;
  bool in_flight = false;
  uint64_t round = 0;
  int64_t last_start_ms = 0;

  static inline const char* name = "gtmesh.agent.task";
};

caf::behavior task_actor(caf::stateful_actor<task_actor_state>* self, std::shared_ptr<task_slot> slot,
                         const agent_clock* clock, measurement_stamper* stamper, bool once) {
  exit_on_unexpected_exception(self, "agent task");
  self->state.slot = std::move(slot);
  self->state.clock = clock;
  self->state.stamper = stamper;
  self->state.once = once;
  {
    std::lock_guard lock(self->state.slot->mutex);
    self->state.slot->notify = [me = caf::actor_cast<caf::actor>(self)](uint64_t round) {
      caf::anon_send(me, round_done_atom_v, round);
    };
  }
  self->send(self, tick_atom_v);
  return {
    [self](tick_atom) {
      auto& st = self->state;
      if (st.in_flight)
        return;
      st.in_flight = true;
      st.last_start_ms = st.clock->now_ms();
      uint64_t round = ++st.round;
      std::weak_ptr<task_slot> weak = st.slot;
      st.slot->task->start_round(st.last_start_ms, [weak, round](measurement_batch batch) {
        auto slot = weak.lock();
        if (!slot)
          return; // the runner is gone
        std::lock_guard lock(slot->mutex);
        slot->completed = std::move(batch);
        if (slot->notify)
          slot->notify(round);
      });
    },
    [self](round_done_atom, uint64_t round) {
      auto& st = self->state;
      if (round != st.round)
        return;
      st.in_flight = false;
      measurement_batch batch;
      {
        std::lock_guard lock(st.slot->mutex);
        batch.swap(st.slot->completed);
      }
      st.stamper->stamp_and_deliver(batch);
      if (st.once) {
        self->quit();
        return;
      }
      int64_t next = st.slot->task->next_round_at_ms(st.last_start_ms);
      int64_t delay = std::clamp<int64_t>(next - st.clock->now_ms(), 0, 24 * 3600 * 1000);
      self->delayed_send(self, std::chrono::milliseconds(delay), tick_atom_v);
    },
  };
}

struct runner_config : caf::actor_system_config {
  runner_config() {
    set("scheduler.policy", caf::atom("sharing"));
    set("scheduler.max-threads", 2);
  }
};

} // namespace

struct agent_runner::impl {
  std::vector<std::shared_ptr<task_slot>> slots;
  const agent_clock& clock;
  measurement_stamper& stamper;
  runner_config cfg;
  std::unique_ptr<caf::actor_system> system;
  std::vector<caf::actor> actors;

  impl(const agent_clock& c, measurement_stamper& s) : clock(c), stamper(s) {}

  /// Drops the actor handles the I/O side could still use.
  void clear_notifiers() {
    for (auto& slot : slots) {
      std::lock_guard lock(slot->mutex);
      slot->notify = nullptr;
    }
  }

  void spawn_all(bool once) {
    if (!system)
      system = std::make_unique<caf::actor_system>(cfg);
    for (auto& slot : slots)
      actors.push_back(system->spawn(task_actor, slot, &clock, &stamper, once));
  }
};

agent_runner::agent_runner(std::vector<std::shared_ptr<measurement_task>> tasks, const agent_clock& clock,
                           measurement_stamper& stamper)
  : impl_(std::make_unique<impl>(clock, stamper)) {
  for (auto& t : tasks) {
    auto slot = std::make_shared<task_slot>();
    slot->task = std::move(t);
    impl_->slots.push_back(std::move(slot));
  }
}

agent_runner::~agent_runner() {
  stop();
}

size_t agent_runner::run_once() {
  impl_->spawn_all(true);
  impl_->system->await_all_actors_done();
  impl_->actors.clear();
  impl_->clear_notifiers();
  return impl_->slots.size();
}

void agent_runner::start() {
  impl_->spawn_all(false);
}

void agent_runner::stop() {
  if (!impl_->system)
    return;
  for (auto& a : impl_->actors)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  impl_->system->await_all_actors_done();
  impl_->actors.clear();
  impl_->clear_notifiers();
}

} // namespace gtmesh::agents
