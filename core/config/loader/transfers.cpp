// A zone's `transfer:` (docs/transfers.md): who may transfer it by AXFR or
// IXFR, and how its dynamic records appear in the transfer.

#include "core/config/loader/loader.hpp"

namespace gtmesh::config_loading {

namespace {

/// Most entries one zone's `allow` may list.
constexpr size_t max_transfer_rules = 64;
/// Most secondaries one zone notifies.
constexpr size_t max_notify_targets = 32;

} // namespace

void loader::parse_transfer(const node& n, const std::string& field, zone& z) {
  transfer_settings& out = z.transfer;
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("transfer"));
  out.enabled = true;
  out.where = where(n);
  if (z.dnssec.enabled)
    error(n, field,
          "a zone with dnssec: cannot be transferred yet: its secondaries would serve it unsigned (docs/transfers.md)");
  if (auto v = str(n, "view", field)) {
    if (*v == "current")
      out.view = transfer_view::current;
    else if (*v == "fail_safe")
      out.view = transfer_view::fail_safe;
    else if (*v == "omit")
      out.view = transfer_view::omit;
    else
      error(child(n, "view"), join(field, "view"),
            "expected current (every answer a client with no location may get now), fail_safe (the records' "
            "fail-safe answers) or omit (no dynamic record), got '" + *v + "'");
  }
  const std::string f = join(field, "allow");
  node list = child(n, "allow");
  if (!list || list.is_null()) {
    error(n, f, "required field is missing: who may transfer the zone, e.g. [192.0.2.53, 198.51.100.0/24]");
    return;
  }
  if (!list.is_sequence()) {
    error(list, f, "expected a list of addresses or prefixes, e.g. [192.0.2.53, 198.51.100.0/24]");
    return;
  }
  if (list.size() == 0)
    error(list, f, "at least one address is required (leave transfer: out to allow no transfer)");
  if (list.size() > max_transfer_rules)
    error(list, f, std::to_string(list.size()) + " entries; at most " + std::to_string(max_transfer_rules));
  for (size_t i = 0; i < list.size(); ++i) {
    const node item = list[i];
    const std::string rf = f + "[" + std::to_string(i) + "]";
    std::optional<std::string> text;
    node at = item;
    if (item.is_scalar()) {
      text = item.text();
    } else if (is_map(item, rf)) {
      check_keys(item, rf, config_fields::keys_of("transfer_rule"));
      text = str(item, "address", rf, true);
      at = child(item, "address");
    }
    if (!text)
      continue;
    auto range = ip_range::parse(*text);
    if (!range) {
      error(at, item.is_scalar() ? rf : join(rf, "address"),
            "not an address or prefix like 192.0.2.0/24: '" + *text + "'");
      continue;
    }
    out.allow.push_back(transfer_rule{*range, where(item)});
  }
  if (node list = child(n, "notify"); list && !list.is_null()) {
    const std::string nf = join(field, "notify");
    if (!list.is_sequence()) {
      error(list, nf, "expected a list of secondaries, e.g. [192.0.2.53, \"[2001:db8::53]:5353\"]");
      return;
    }
    if (list.size() > max_notify_targets)
      error(list, nf, std::to_string(list.size()) + " secondaries; at most " + std::to_string(max_notify_targets));
    for (size_t i = 0; i < list.size(); ++i) {
      const node item = list[i];
      const std::string tf = nf + "[" + std::to_string(i) + "]";
      if (!item.is_scalar()) {
        error(item, tf, "expected ADDRESS or ADDRESS:PORT ([IPv6]:PORT)");
        continue;
      }
      auto s = parse_server(item.text());
      if (!s)
        error(item, tf, "expected ADDRESS or ADDRESS:PORT ([IPv6]:PORT), got '" + item.text() + "'");
      else
        out.notify.push_back(transfer_settings::notify_target{s->address, s->port});
    }
  }
}

} // namespace gtmesh::config_loading
