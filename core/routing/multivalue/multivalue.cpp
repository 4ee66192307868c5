#include "core/routing/multivalue/multivalue.hpp"

namespace gtmesh {

void multivalue_method::validate(const profile& p, const config& cfg, profile_report& report) const {
  for (const auto& e : p.endpoints)
    if (e.kind != endpoint_kind::external || e.answers.empty() || e.answers[0].type == dns::rr_type::cname)
      report.error(e, "", "multivalue profiles take only external endpoints whose target is an IPv4 or IPv6 address");
}

selection multivalue_method::select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                                    endpoint_choice& choice) const {
  int limit = p.source->max_return;
  for (size_t i = 0; i < p.endpoints.size() && choice.count < limit; ++i)
    if (available[i])
      choice.add(i);
  if (rc.trace && choice.count)
    rc.trace->note(rc.depth, "multivalue: " + std::to_string(choice.count) + " available endpoint(s), max_return " +
                               std::to_string(limit));
  return choice.count ? selection::chosen : selection::none_available;
}

} // namespace gtmesh
