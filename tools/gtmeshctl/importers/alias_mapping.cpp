// How the importers write an alias (importer.hpp, "aliases"): the one place
// to change when gtmesh's ALIAS record is in the loader. Switching over:
// set gtmesh_has_alias_records (importer.hpp) to true; the record and the
// endpoint below are then written in the ALIAS syntax, config_builder
// accepts type ALIAS and kind alias (importer.cpp, add_record/add_profile),
// and the apex pass (keep_cnames_off_apexes) no longer meets them, since it
// only takes out external host-name endpoints. Then update the alias rows of
// docs/migrate.md and the apex rows of tests/data/import/route53/
// apex-alias-rrsets.table.yaml (they expect the apex left out today).

#include "tools/gtmeshctl/importers/importer.hpp"

namespace gtmesh::cli::importing {

void add_alias_record(config_builder& b, const std::string& zone, const std::string& name, const std::string& target,
                      long long ttl, const std::string& monitor, const std::string& source, report& r) {
  if constexpr (gtmesh_has_alias_records) {
    json rec = {{"name", name}, {"type", "ALIAS"}, {"target", target}, {"ttl", ttl}};
    if (!monitor.empty())
      rec["monitor"] = monitor;
    b.add_record(zone, std::move(rec), source);
    return;
  }
  if (name == "@") {
    r.left_out(source, "alias to " + target + " at the zone apex: gtmesh writes no CNAME there (beside the SOA and NS "
                       "it breaks the zone, RFC 1034 3.6.2) and its ALIAS record is not there yet; left out");
    return;
  }
  if (b.has_record(zone, name, "CNAME")) {
    r.note(source, "alias to " + target + ": the CNAME written for " + name + "'s other alias answers it too");
    return;
  }
  r.note(source, "alias to " + target + ": written as a CNAME to it, where the source answers the target's "
                 "addresses (gtmesh's ALIAS record is not there yet)" +
                   std::string(monitor.empty() ? "" : "; its health check does not apply to a plain record"));
  b.add_record(zone, {{"name", name}, {"type", "CNAME"}, {"ttl", ttl}, {"answers", {target}}}, source);
}

json alias_endpoint(const std::string& name, const std::string& target, const std::string& monitor,
                    const std::string& source) {
  json ep = {{"name", name}};
  if constexpr (gtmesh_has_alias_records) {
    ep["kind"] = "alias";
  } else {
    ep["kind"] = "external"; // answered as a CNAME; never at an apex (finish)
    ep["_alias"] = true;
  }
  ep["target"] = target;
  if (!monitor.empty())
    ep["monitor"] = monitor;
  ep["_from"] = source;
  return ep;
}

} // namespace gtmesh::cli::importing
