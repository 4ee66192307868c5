#include "core/dns/lookup/answer_counters.hpp"

#include "core/dns/wire/rr_type.hpp"

#include <new>

namespace gtmesh::dns {

namespace {

constexpr const char* outcome_names[] = {"fail_safe", "fail_open", "nodata"};

} // namespace

void answer_counters::switch_to(const plan_ptr& plan) {
  if (current_ && same_routing(*current_->plan, *plan)) {
    // Compiled again for a zone's committed view: the same records and
    // slots. Keep counting in this table (no rebuild on the query path).
    std::lock_guard lock(mutex_);
    current_->plan = plan; // the old plan may go
    current_plan_ = plan.get();
    return;
  }
  auto t = std::make_unique<table>();
  t->plan = plan;
  t->dc_count = plan->dc_count();
  const size_t records = plan->records.size();
  t->first.resize(records);
  t->key.resize(records);
  t->width.resize(records);
  size_t next = 0;
  for (size_t r = 0; r < records; ++r) {
    const record_plan& rec = plan->records[r];
    if (rec.mode == record_mode::dc && rec.policy < plan->dc_plans.size()) {
      t->key[r] = table::keyed::by_dc;
      t->width[r] = plan->dc_plans[rec.policy].candidate_count + 1;
    } else if (rec.mode == record_mode::profile && rec.policy < plan->profile_plans.size()) {
      t->key[r] = table::keyed::by_endpoint;
      t->width[r] = static_cast<uint32_t>(plan->profile_plans[rec.policy].endpoints.size()) + 1;
    } else {
      t->key[r] = table::keyed::single;
      t->width[r] = 1;
    }
    t->first[r] = static_cast<uint32_t>(next);
    next += t->width[r];
  }
  t->outcome_base = next;
  t->size = next + records * 3;
  t->values.reset(static_cast<uint64_t*>(std::calloc(t->size, sizeof(uint64_t))));
  if (!t->values)
    throw std::bad_alloc();
  std::lock_guard lock(mutex_);
  // This thread is the only writer and writes no more to the old table:
  // fold it now (releasing its plan), whether or not anyone scrapes.
  for (const auto& old : tables_)
    add_table(*old, retired_);
  tables_.clear();
  tables_.push_back(std::move(t));
  current_ = tables_.back().get();
  current_plan_ = plan.get();
}

void answer_counters::add_table(const table& t, answer_totals& into) {
  const routing_plan& plan = *t.plan;
  for (size_t r = 0; r < plan.records.size(); ++r) {
    const record_plan& rec = plan.records[r];
    std::string type(to_string(rec.type));
    const size_t last = t.width[r] - 1;
    for (size_t k = 0; k < t.width[r]; ++k)
      if (uint64_t v = t.load(t.first[r] + k)) {
        std::string dc, endpoint;
        if (t.key[r] == table::keyed::by_dc && k < last) {
          dc = plan.dc_names[plan.candidates_of(plan.dc_plans[rec.policy])[k].dc];
        } else if (t.key[r] == table::keyed::by_endpoint && k < last) {
          const endpoint_plan& e = plan.profile_plans[rec.policy].endpoints[k];
          endpoint = e.source ? e.source->name : std::string();
          if (e.kind == endpoint_kind::dc && e.dc < t.dc_count)
            dc = plan.dc_names[e.dc];
        }
        into[answer_key{std::string(rec.name), type, std::move(dc), std::move(endpoint), "answer"}] += v;
      }
    for (size_t o = 0; o < 3; ++o)
      if (uint64_t v = t.load(t.outcome_base + r * 3 + o))
        into[answer_key{std::string(rec.name), type, "", "", outcome_names[o]}] += v;
  }
}

void answer_counters::collect(answer_totals& into) const {
  std::lock_guard lock(mutex_);
  for (const auto& [k, v] : retired_)
    into[k] += v;
  if (!tables_.empty())
    add_table(*tables_.back(), into);
}

} // namespace gtmesh::dns
