#include "core/dnstap/decision_record.hpp"

#include "core/dns/wire/rr_type.hpp"
#include "core/routing/answer_set.hpp"

namespace gtmesh::dnstap {

namespace {

const char* mode_name(record_mode m) {
  switch (m) {
    case record_mode::plain:
      return "plain";
    case record_mode::dc:
      return "dc";
    case record_mode::static_rules:
      return "static";
    case record_mode::profile:
      return "profile";
    case record_mode::alias:
      return "alias";
  }
  return "-";
}

} // namespace

std::string decision_reason(const message_entry& m, const routing_plan* plan, std::span<const uint8_t> response) {
  if (response.size() >= 4) {
    switch (response[3] & 0x0f) {
      case 0:
      case 3:
        break;
      case 1:
        return "formerr";
      case 2:
        return "servfail";
      case 4:
        return "notimp";
      case 5:
        return "refused";
      case 7: // the low bits of BADCOOKIE (23, RFC 7873); never YXRRSET here
        return "badcookie";
      default:
        return "rcode" + std::to_string(response[3] & 0x0f);
    }
  } else if (response.empty()) {
    return "dropped";
  }
  // A response rate limiting slip: TC set before any lookup (RFC 9567's
  // "slip": the resolver retries over TCP).
  if (response.size() >= 4 && (response[2] & 0x02) && m.record == UINT32_MAX &&
      static_cast<answer_status>(m.status) == answer_status::refused)
    return "rrl_slip";
  switch (static_cast<answer_status>(m.status)) {
    case answer_status::refused:
      return "refused";
    case answer_status::nxdomain:
      return "nxdomain";
    case answer_status::nodata:
      return static_cast<answer_outcome>(m.outcome) == answer_outcome::nodata ? "nodata_policy" : "nodata";
    case answer_status::answer:
      break;
  }
  switch (static_cast<answer_outcome>(m.outcome)) {
    case answer_outcome::fail_safe:
      return "fail_safe";
    case answer_outcome::fail_open:
      return "fail_open";
    case answer_outcome::nodata:
      return "nodata_policy";
    case answer_outcome::routed:
      break;
  }
  if (plan && m.record < plan->records.size() && plan->records[m.record].mode == record_mode::plain)
    return "plain";
  return "picked";
}

std::string decision_text(const message_entry& m, const routing_plan* plan, std::span<const uint8_t> response) {
  std::string out(decision_prefix);
  out += " cfg=" + std::to_string(m.config_version) + " gen=" + std::to_string(m.generation);
  std::string record = "-", type = "-", mode = "-", profile, method, dc = "-", endpoint = "-";
  const record_plan* rec = plan && m.record < plan->records.size() ? &plan->records[m.record] : nullptr;
  if (rec) {
    record = std::string(rec->name);
    type = std::string(dns::to_string(rec->type));
    mode = mode_name(rec->mode);
    if (rec->mode == record_mode::profile && rec->policy < plan->profile_plans.size()) {
      const profile_plan& pp = plan->profile_plans[rec->policy];
      profile = pp.source ? pp.source->name : "-";
      method = pp.source && !pp.source->method.empty() ? pp.source->method : "-"; // as in the config
      if (m.endpoint < pp.endpoints.size() && pp.endpoints[m.endpoint].source)
        endpoint = pp.endpoints[m.endpoint].source->name;
    }
  } else if (m.record != UINT32_MAX) {
    record = "#" + std::to_string(m.record);
  }
  if (plan && m.dc < plan->dc_names.size())
    dc = plan->dc_names[m.dc];
  else if (m.dc != UINT32_MAX)
    dc = "#" + std::to_string(m.dc);
  out += " record=" + record + " type=" + type + " mode=" + mode;
  if (m.asked_record != UINT32_MAX && m.asked_record != m.record && plan && m.asked_record < plan->records.size())
    out += " asked=" + std::string(plan->records[m.asked_record].name); // the CNAME chain's start
  if (!profile.empty())
    out += " profile=" + profile + " method=" + method;
  out += " dc=" + dc + " endpoint=" + endpoint + " reason=" + decision_reason(m, plan, response) +
         " scope=" + std::to_string(m.scope) + " wildcard=" + std::to_string(m.wildcard);
  return out;
}

std::optional<std::map<std::string, std::string>> parse_decision(std::string_view text) {
  // The prefix is a word of its own: "gtmesh/10" is not "gtmesh/1".
  if (!text.starts_with(decision_prefix) ||
      (text.size() > decision_prefix.size() && text[decision_prefix.size()] != ' '))
    return std::nullopt;
  std::map<std::string, std::string> out;
  size_t at = decision_prefix.size();
  while (at < text.size()) {
    while (at < text.size() && text[at] == ' ')
      ++at;
    size_t end = text.find(' ', at);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view pair = text.substr(at, end - at);
    if (auto eq = pair.find('='); eq != std::string_view::npos && eq > 0)
      out[std::string(pair.substr(0, eq))] = std::string(pair.substr(eq + 1));
    at = end;
  }
  return out;
}

} // namespace gtmesh::dnstap
