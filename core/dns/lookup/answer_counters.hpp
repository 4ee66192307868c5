#pragma once

// Answers per record: by the DC that answered (the per-DC answer statistics
// operators ask for) and by fallback outcome (fail_safe, fail_open, NODATA by
// policy). Like dns_counters, one instance per socket thread with a single
// writer: the query path does a relaxed load and store into a flat table laid
// out for the routing plan it answers from. A new plan (a config change) gives
// the thread a new table, allocated once on its first query under that plan;
// the table it leaves is folded then into totals keyed by names (and its
// plan released), so counts survive config changes and stay monotonic.

#include "core/routing/answer_set.hpp"
#include "core/routing/routing_plan.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace gtmesh::dns {

/// (record owner, record type, dc or "", endpoint or "",
///  outcome: "answer" | "fail_safe" | "fail_open" | "nodata")
using answer_key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
using answer_totals = std::map<answer_key, uint64_t>;

class answer_counters {
public:
  answer_counters() = default;
  answer_counters(const answer_counters&) = delete;
  answer_counters& operator=(const answer_counters&) = delete;

  /// The owning thread, after resolving a query with a record.
  void count(const plan_ptr& plan, const answer_set& a) noexcept {
    if (a.record == answer_set::no_index) [[unlikely]]
      return;
    if (plan.get() != current_plan_) [[unlikely]]
      switch_to(plan);
    table& t = *current_;
    if (a.status == answer_status::answer)
      bump(t.values[t.answer_slot(a.record, a.dc, a.endpoint)]);
    if (a.outcome != answer_outcome::routed)
      bump(t.values[t.outcome_slot(a.record, a.outcome)]);
  }

  /// Any thread: adds this thread's counts (non-zero ones) to `into`.
  void collect(answer_totals& into) const;

private:
  struct table {
    plan_ptr plan; ///< held: the layout below is only valid for this plan
    uint32_t dc_count = 0;
    std::vector<uint32_t> first; ///< per record: its first answer slot
    /// Per record, what its answer slots are keyed by: one slot (plain,
    /// static), one per candidate DC of its policy + 1 for none (DC mode: 8
    /// slots for a record answering in 8 of 100 DCs), or one per endpoint of
    /// its profile + 1 for none (profile).
    enum class keyed : uint8_t { single, by_dc, by_endpoint };
    std::vector<keyed> key;
    std::vector<uint32_t> width; ///< per record: its number of answer slots
    size_t outcome_base = 0;     ///< 3 outcome slots per record from here
    /// calloc'd and used through std::atomic_ref: a big table comes as
    /// fresh zero pages, and a page no query counted in is never touched
    /// (8 MB per socket thread at 100,000 records, docs/benchmarks.md).
    struct free_values {
      void operator()(uint64_t* p) const noexcept { std::free(p); }
    };
    std::unique_ptr<uint64_t[], free_values> values;
    size_t size = 0;
    uint64_t load(size_t slot) const noexcept {
      return std::atomic_ref<uint64_t>(values[slot]).load(std::memory_order_relaxed);
    }

    size_t answer_slot(uint32_t record, uint32_t dc, uint32_t endpoint) const noexcept {
      const uint32_t last = width[record] - 1; // the "none" slot
      switch (key[record]) {
        case keyed::by_dc: {
          const auto candidates = plan->candidates_of(plan->dc_plans[plan->records[record].policy]);
          uint32_t k = 0;
          while (k < last && candidates[k].dc != dc)
            ++k;
          return first[record] + k;
        }
        case keyed::by_endpoint:
          return first[record] + (endpoint < last ? endpoint : last);
        default:
          return first[record];
      }
    }
    size_t outcome_slot(uint32_t record, answer_outcome o) const noexcept {
      return outcome_base + size_t{record} * 3 + (static_cast<size_t>(o) - 1);
    }
  };

  static void bump(uint64_t& slot) noexcept {
    std::atomic_ref<uint64_t> v(slot);
    v.store(v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void switch_to(const plan_ptr& plan);
  static void add_table(const table& t, answer_totals& into);

  const routing_plan* current_plan_ = nullptr; ///< owning thread only
  table* current_ = nullptr;                   ///< owning thread only
  mutable std::mutex mutex_;                   ///< guards the two below
  std::vector<std::unique_ptr<table>> tables_; ///< the current one (at most one)
  answer_totals retired_;                      ///< tables the thread has left, folded
};

} // namespace gtmesh::dns
