// How the importers write an alias (importer.hpp, "aliases"): an ALIAS
// record, a record of one address type over one alias endpoint, or an alias
// endpoint inside a profile. config_builder checks what they write (targets,
// names, an ALIAS beside an A, AAAA or CNAME) and adds `resolver:`.

#include "tools/gtmeshctl/importers/importer.hpp"

namespace gtmesh::cli::importing {

std::string alias_target(std::string_view target) {
  std::string t = ascii_lower(target);
  if (!t.empty() && !t.ends_with(".") && !is_ip_address(t)) // an address stays one (and is refused)
    t += '.';
  return t;
}

void add_alias_record(config_builder& b, const std::string& zone, const std::string& name, const std::string& target,
                      std::optional<long long> ttl, const std::string& monitor, const std::string& source) {
  json rec = {{"name", name}, {"type", "ALIAS"}, {"target", alias_target(target)}};
  if (ttl)
    rec["ttl"] = *ttl;
  if (!monitor.empty())
    rec["monitor"] = monitor;
  b.add_record(zone, std::move(rec), source);
}

void add_alias_type_record(config_builder& b, const std::string& zone, const std::string& name,
                           const std::string& type, const std::string& target, long long ttl,
                           const std::string& monitor, const std::string& profile_base, const std::string& source) {
  json prof = {{"name", b.reserve_profile_name(profile_base)},
               {"method", "priority"},
               {"endpoints", json::array({alias_endpoint("alias", target, monitor, source)})}};
  const std::string pname = prof["name"].get<std::string>();
  b.add_profile(std::move(prof), source);
  b.add_record(zone, {{"name", name}, {"type", type}, {"ttl", ttl}, {"profile", pname}}, source);
}

json alias_endpoint(const std::string& name, const std::string& target, const std::string& monitor,
                    const std::string& source) {
  json ep = {{"name", name}, {"kind", "alias"}, {"target", alias_target(target)}};
  if (!monitor.empty())
    ep["monitor"] = monitor;
  ep["_from"] = source;
  return ep;
}

} // namespace gtmesh::cli::importing
