#pragma once

#include <atomic>
#include <cstdint>

namespace gtmesh::agents {

/// Where agents get "now" (Unix milliseconds) for measurement timestamps,
/// round scheduling and rate computations. Injected so tests can step time
/// and count probe rounds instead of sleeping. Network timings (RTT, probe
/// timeouts) always use the real steady clock: they measure the network.
class agent_clock {
public:
  virtual ~agent_clock() = default;
  virtual int64_t now_ms() const = 0;
};

/// The wall clock (std::chrono::system_clock).
class system_agent_clock final : public agent_clock {
public:
  int64_t now_ms() const override;
};

/// A clock that moves only when told to. Thread-safe.
class manual_clock final : public agent_clock {
public:
  explicit manual_clock(int64_t start_ms = 1'700'000'000'000) : now_(start_ms) {}
  int64_t now_ms() const override { return now_.load(); }
  void advance(int64_t ms) { now_ += ms; }
  void set(int64_t ms) { now_ = ms; }

private:
  std::atomic<int64_t> now_;
};

} // namespace gtmesh::agents
