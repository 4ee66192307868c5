// A zone's `transfer:` (docs/transfers.md): who may transfer it by AXFR or
// IXFR, and how its dynamic records appear in the transfer.

#include "core/config/loader/loader.hpp"
#include "core/dns/wire/name.hpp"
#include "core/text/ascii_case.hpp"

#include <algorithm>

namespace gtmesh::config_loading {

namespace {

/// Most entries one zone's `allow` may list.
constexpr size_t max_transfer_rules = 64;
/// Most secondaries one zone notifies.
constexpr size_t max_notify_targets = 32;

/// Most TSIG keys a config may name.
constexpr size_t max_tsig_keys = 64;

} // namespace

void loader::parse_tsig_keys(const node& list) {
  const std::string f = "tsig_keys";
  if (!list.is_sequence()) {
    error(list, f, "expected a list of keys, e.g. [{name: transfer-key, secret_file: /etc/gtmesh/transfer.key}]");
    return;
  }
  if (list.size() > max_tsig_keys)
    error(list, f, std::to_string(list.size()) + " keys; at most " + std::to_string(max_tsig_keys));
  for (size_t i = 0; i < list.size() && i < max_tsig_keys; ++i) {
    const node item = list[i];
    const std::string kf = f + "[" + std::to_string(i) + "]";
    if (!is_map(item, kf))
      continue;
    check_keys(item, kf, config_fields::keys_of("tsig_key"));
    auto name = str(item, "name", kf, true);
    auto file = str(item, "secret_file", kf, true);
    if (!name || !file)
      continue;
    std::string canonical = dns::canonical_text(*name);
    if (!dns::text_to_wire(canonical)) {
      error(child(item, "name"), join(kf, "name"), "not a domain name: '" + *name + "'");
      continue;
    }
    if (std::any_of(cfg_.tsig_keys.begin(), cfg_.tsig_keys.end(),
                    [&](const tsig_key_settings& k) { return k.name == canonical; })) {
      error(child(item, "name"), join(kf, "name"), "a second key named '" + *name + "'");
      continue;
    }
    cfg_.tsig_keys.push_back(tsig_key_settings{canonical, resolve_path(*file), where(item)});
  }
}

/// `key: NAME` of a transfer rule or notify target at `map`: its index in
/// tsig_keys, or -1 (none given, or an error reported).
int loader::tsig_key_ref(const node& map, const std::string& field) {
  auto name = str(map, "key", field);
  if (!name)
    return -1;
  const std::string canonical = dns::canonical_text(*name);
  for (size_t i = 0; i < cfg_.tsig_keys.size(); ++i)
    if (cfg_.tsig_keys[i].name == canonical)
      return static_cast<int>(i);
  error(child(map, "key"), join(field, "key"),
        "no key '" + *name + "' in tsig_keys" +
          (cfg_.tsig_keys.empty() ? std::string(" (there is none)") : ""));
  return -1;
}

void loader::parse_transfer(const node& n, const std::string& field, zone& z) {
  transfer_settings& out = z.transfer;
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("transfer"));
  out.enabled = true;
  out.where = where(n);
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
    int key = -1;
    std::string tls_client;
    if (item.is_scalar()) {
      text = item.text();
    } else if (is_map(item, rf)) {
      check_keys(item, rf, config_fields::keys_of("transfer_rule"));
      text = str(item, "address", rf);
      at = child(item, "address");
      key = tsig_key_ref(item, rf);
      // Compared with certificate names: lowercase, without a trailing dot.
      tls_client = ascii_lower(str(item, "tls_client", rf).value_or(""));
      if (!tls_client.empty() && tls_client.back() == '.')
        tls_client.pop_back();
      if (!text && !child(item, "key") && tls_client.empty()) {
        error(item, rf, "expected an address, a key, a TLS client or a mix, e.g. {address: 192.0.2.53, key: "
                        "transfer-key}");
        continue;
      }
      if (!text) {
        if (key >= 0 || !child(item, "key"))
          out.allow.push_back(transfer_rule{ip_range{}, true, key, tls_client, where(item)});
        continue;
      }
    }
    if (!text)
      continue;
    auto range = ip_range::parse(*text);
    if (!range) {
      error(at, item.is_scalar() ? rf : join(rf, "address"),
            "not an address or prefix like 192.0.2.0/24: '" + *text + "'");
      continue;
    }
    out.allow.push_back(transfer_rule{*range, false, key, tls_client, where(item)});
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
      node text = item;
      int key = -1;
      if (item.is_map()) {
        check_keys(item, tf, config_fields::keys_of("notify_target"));
        if (!str(item, "address", tf, true))
          continue;
        text = child(item, "address");
        key = tsig_key_ref(item, tf);
      } else if (!item.is_scalar()) {
        error(item, tf, "expected ADDRESS or ADDRESS:PORT ([IPv6]:PORT), or {address: ..., key: ...}");
        continue;
      }
      const std::string af = item.is_map() ? join(tf, "address") : tf;
      auto s = parse_server(text.text());
      if (!s)
        error(text, af, "expected ADDRESS or ADDRESS:PORT ([IPv6]:PORT), got '" + text.text() + "'");
      else
        out.notify.push_back(transfer_settings::notify_target{s->address, s->port, key});
    }
  }
}

} // namespace gtmesh::config_loading
