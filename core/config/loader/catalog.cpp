// `catalog:` (docs/transfers.md, "The catalog zone"): a catalog zone (RFC
// 9432, version 2) generated from the config, listing every zone that has
// `transfer:`, so that a secondary consuming it serves a zone added by a
// push without a change to its own config.
//
// The catalog is made a zone like any other: its text is written here and
// read by parse_zone() (every check of a zone applies, and the responders,
// transfers, NOTIFY and the serial need nothing of their own); its
// `transfer:` is read from the operator's node, so mistakes there name the
// operator's line.

#include "core/config/loader/loader.hpp"

#include "core/dns/wire/name.hpp"

#include <cstdio>

namespace gtmesh::config_loading {

namespace {

/// A member's <unique-N> label (RFC 9432 4.1): 64-bit FNV-1a of its
/// canonical name in hex, so every decider, every restart and every version
/// of the config give a zone the same one (a new one would tell secondaries
/// to reset the zone).
std::string member_id(const std::string& zone_name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : zone_name) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  char out[24];
  std::snprintf(out, sizeof out, "z%016llx", static_cast<unsigned long long>(h));
  return out;
}

} // namespace

void loader::parse_catalog(const node& n) {
  const std::string field = "catalog";
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("catalog"));
  auto name = str(n, "name", field, true);
  const node t = child(n, "transfer");
  if (!t || t.is_null())
    error(n, join(field, "transfer"),
          "required field is missing: who may transfer the catalog, e.g. {allow: [192.0.2.53], notify: [192.0.2.53]}");
  if (!name)
    return;
  auto wire = dns::text_to_wire(*name);
  if (!wire || name->find('*') != std::string::npos) {
    error(child(n, "name"), join(field, "name"), "not a valid domain name: '" + *name + "'");
    return;
  }
  const std::string catalog_name = dns::canonical_text(*name);
  if (zone_names_.count(catalog_name)) {
    error(child(n, "name"), join(field, "name"),
          "'" + catalog_name + "' is a zone of this config: the catalog needs a name of its own (e.g. catalog.invalid.)");
    return;
  }
  std::vector<std::string> members;
  for (const zone& z : cfg_.zones)
    if (z.transfer.enabled)
      members.push_back(z.name);
  if (members.empty()) {
    error(n, field, "no zone has transfer:, so the catalog would list nothing");
    return;
  }
  if (t && t.is_map() && child(t, "view"))
    error(child(t, "view"), join(field, "transfer.view"), "the catalog has no dynamic records: leave view out");

  // The zone's text (RFC 9432 section 4): any SOA, one NS (invalid.), the
  // version, and one PTR per member. Every name is written absolute.
  std::string text = "name: \"" + catalog_name + "\"\n"
                     "soa: {primary: invalid., admin: invalid., refresh: 3600, minimum: 0}\n"
                     "ns: [invalid.]\n"
                     "records:\n"
                     "  - {name: version, type: TXT, ttl: 0, answers: [\"2\"]}\n";
  for (const std::string& m : members)
    text += "  - {name: " + member_id(m) + ".zones, type: PTR, ttl: 0, answers: [\"" + m + "\"]}\n";
  catalog_text_ = std::move(text);
  yaml::parse_result parsed = yaml::parse(catalog_text_);
  if (!parsed.doc) { // cannot happen with the names checked above; said at the operator's node if it does
    error(n, field, "the catalog zone could not be written: " + parsed.message);
    return;
  }
  catalog_doc_ = std::move(parsed.doc);
  const size_t errors_before = errors_.size();
  parse_zone(catalog_doc_->root(), field);
  if (errors_.size() != errors_before || cfg_.zones.empty() || cfg_.zones.back().name != catalog_name) {
    // Its own text's lines mean nothing to the operator: point at catalog:.
    for (size_t i = errors_before; i < errors_.size(); ++i) {
      config_location w = where(n);
      errors_[i].line = w.line;
      errors_[i].column = w.column;
    }
    return;
  }
  zone& catalog = cfg_.zones.back();
  catalog.where = where(n);
  catalog.catalog = true;
  if (t)
    parse_transfer(t, join(field, "transfer"), catalog);
  catalog.transfer.view = transfer_view::omit;
}

} // namespace gtmesh::config_loading
