#pragma once

// The DNS responder's counters as Prometheus families. The counters stay
// per socket thread (dns_counters.hpp: single writer, no shared atomics on
// the query path); a scrape sums them, exactly like `gtmesh serve`'s stats.

#include "core/dns/lookup/answer_counters.hpp"
#include "core/dns/lookup/dns_counters.hpp"
#include "core/observe/exposition.hpp"

namespace gtmesh::observe {

/// Appends gtmesh_dns_* families for `c` (every counter exactly once).
void append_dns_metrics(const dns::dns_counters& c, uint64_t snapshot_generation, families& out);

/// Appends gtmesh_answers_total{record,type,dc} and
/// gtmesh_answer_fallbacks_total{record,type,outcome}.
void append_answer_metrics(const dns::answer_totals& totals, families& out);

} // namespace gtmesh::observe
