// A zone's transfer: (docs/transfers.md): view and allow load into the
// model; every mistake names its line and field; a signed zone cannot be
// transferred yet.

#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gtmesh {
namespace {

// Line 8 is the zone's transfer:.
std::string zone_with(const std::string& transfer, const std::string& extra = "") {
  return R"(datacenters:
  - {name: fra}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
)" + extra + "    transfer: " + transfer + R"(
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
)";
}

load_result load(const std::string& yaml) {
  return load_config_text(yaml, "cfg.yaml", routing_methods(), config_scope::whole, config_origin::operator_file);
}

void expect_error(const std::string& yaml, int line, const std::string& field, const std::string& message) {
  auto r = load(yaml);
  ASSERT_FALSE(r.ok()) << "accepted:\n" << yaml;
  bool found = std::any_of(r.errors.begin(), r.errors.end(), [&](const config_error& e) {
    return e.file == "cfg.yaml" && e.line == line && e.field.find(field) != std::string::npos &&
           e.message.find(message) != std::string::npos;
  });
  EXPECT_TRUE(found) << "wanted line " << line << " field~" << field << " message~" << message << "\ngot:\n"
                     << r.report();
}

TEST(transfer_config, view_and_allow_load_into_the_model) {
  auto r = load(zone_with("{view: fail_safe, allow: [127.0.0.1, {address: 2001:db8::/32}, 10.0.0.0/8]}"));
  ASSERT_TRUE(r.ok()) << r.report();
  const transfer_settings& t = r.cfg->zones[0].transfer;
  EXPECT_TRUE(t.enabled);
  EXPECT_EQ(t.view, transfer_view::fail_safe);
  ASSERT_EQ(t.allow.size(), 3u);
  EXPECT_TRUE(t.allows(*ip_address::parse("127.0.0.1")));
  EXPECT_FALSE(t.allows(*ip_address::parse("127.0.0.2")));
  EXPECT_TRUE(t.allows(*ip_address::parse("2001:db8::53")));
  EXPECT_FALSE(t.allows(*ip_address::parse("2001:db9::53")));
  EXPECT_TRUE(t.allows(*ip_address::parse("10.20.30.40")));
  EXPECT_FALSE(t.allows(*ip_address::parse("11.0.0.1")));

  auto notify = load(zone_with(R"({allow: [192.0.2.1], notify: [192.0.2.53, "198.51.100.53:5353", "[2001:db8::53]:53"]})"));
  ASSERT_TRUE(notify.ok()) << notify.report();
  const auto& targets = notify.cfg->zones[0].transfer.notify;
  ASSERT_EQ(targets.size(), 3u);
  EXPECT_EQ(targets[0].address.to_string(), "192.0.2.53");
  EXPECT_EQ(targets[0].port, 53);
  EXPECT_EQ(targets[1].port, 5353);
  EXPECT_EQ(targets[2].address.to_string(), "2001:db8::53");

  auto plain = load(zone_with("{allow: [192.0.2.1]}"));
  ASSERT_TRUE(plain.ok()) << plain.report();
  EXPECT_EQ(plain.cfg->zones[0].transfer.view, transfer_view::current) << "current is the default";
}

TEST(transfer_config, a_zone_without_transfer_allows_none) {
  std::string text = zone_with("{allow: [0.0.0.0/0]}");
  text.erase(text.find("    transfer:"), text.find("    records:") - text.find("    transfer:"));
  auto r = load(text);
  ASSERT_TRUE(r.ok()) << r.report();
  EXPECT_FALSE(r.cfg->zones[0].transfer.enabled);
  EXPECT_FALSE(r.cfg->zones[0].transfer.allows(*ip_address::parse("127.0.0.1")));
}

TEST(transfer_config, every_mistake_names_its_line_and_field) {
  expect_error(zone_with("{view: everything, allow: [127.0.0.1]}"), 7, "transfer.view", "got 'everything'");
  expect_error(zone_with("{view: current}"), 7, "transfer.allow", "required field is missing");
  expect_error(zone_with("{allow: []}"), 7, "transfer.allow", "at least one address");
  expect_error(zone_with("{allow: 127.0.0.1}"), 7, "transfer.allow", "expected a list");
  expect_error(zone_with("{allow: [127.0.0.300]}"), 7, "transfer.allow[0]", "'127.0.0.300'");
  expect_error(zone_with("{allow: [{address: nowhere}]}"), 7, "transfer.allow[0].address", "'nowhere'");
  expect_error(zone_with("{allow: [{addr: 127.0.0.1}]}"), 7, "transfer.allow[0]", "addr");
  expect_error(zone_with("{allow: [127.0.0.1], notify: 192.0.2.1}"), 7, "transfer.notify", "expected a list");
  expect_error(zone_with("{allow: [127.0.0.1], notify: [192.0.2.1:99999]}"), 7, "transfer.notify[0]", "'192.0.2.1:99999'");
  expect_error(zone_with("{allow: [127.0.0.1], notify: [[192.0.2.1]]}"), 7, "transfer.notify[0]",
               "expected ADDRESS");
  expect_error(zone_with("{allow: [127.0.0.1], journal: 10}"), 7, "transfer.journal", "unknown key");
  expect_error(zone_with("[127.0.0.1]"), 7, "transfer", "");
}

// catalog: (docs/transfers.md, "The catalog zone"): a zone generated from
// the config, RFC 9432 version 2, listing every zone with transfer:.
TEST(transfer_config, the_catalog_lists_every_transferable_zone) {
  const std::string text = zone_with("{allow: [127.0.0.1]}") + R"(  - name: example.org
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    transfer: {allow: [127.0.0.1]}
  - name: example.net
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
catalog:
  name: catalog.invalid
  transfer: {allow: [192.0.2.53], notify: ["192.0.2.53:5353"]}
)";
  auto r = load(text);
  ASSERT_TRUE(r.ok()) << r.report();
  const zone* catalog = nullptr;
  for (const zone& z : r.cfg->zones)
    if (z.catalog)
      catalog = &z;
  ASSERT_NE(catalog, nullptr);
  EXPECT_EQ(catalog->name, "catalog.invalid.");
  EXPECT_EQ(catalog->ns, std::vector<std::string>{"invalid."});
  EXPECT_TRUE(catalog->transfer.enabled);
  EXPECT_EQ(catalog->transfer.view, transfer_view::omit);
  EXPECT_TRUE(catalog->transfer.allows(*ip_address::parse("192.0.2.53")));
  EXPECT_FALSE(catalog->transfer.allows(*ip_address::parse("127.0.0.1")));
  ASSERT_EQ(catalog->transfer.notify.size(), 1u);
  EXPECT_EQ(catalog->transfer.notify[0].port, 5353);
  // version "2", then a PTR per zone with transfer: (example.net has none).
  std::vector<std::string> names, types, values;
  for (const record& rec : catalog->records) {
    names.push_back(rec.name);
    types.push_back(std::string(dns::to_string(rec.type)));
    for (const answer_item& a : r.cfg->answers_of(rec.plain))
      values.push_back(r.cfg->value_of(a).text());
  }
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "version.catalog.invalid.");
  EXPECT_EQ(types[0], "TXT");
  EXPECT_EQ(types[1], "PTR");
  EXPECT_EQ(types[2], "PTR");
  EXPECT_TRUE(names[1].ends_with(".zones.catalog.invalid.")) << names[1];
  EXPECT_NE(names[1], names[2]);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0], "\"2\"");
  EXPECT_EQ(std::vector<std::string>(values.begin() + 1, values.end()),
            (std::vector<std::string>{"example.com.", "example.org."}));
  // The same zone gets the same member label in another config (a new one
  // would tell a secondary to reset it).
  auto again = load(zone_with("{allow: [127.0.0.1]}") + "catalog: {name: catalog.invalid., transfer: {allow: [192.0.2.53]}}\n");
  ASSERT_TRUE(again.ok()) << again.report();
  EXPECT_EQ(again.cfg->zones.back().records[1].name, names[1]);
}

TEST(transfer_config, every_catalog_mistake_names_its_line_and_field) {
  const std::string base = zone_with("{allow: [127.0.0.1]}");
  // Line 10 is catalog:.
  expect_error(base + "catalog: {name: example.com, transfer: {allow: [127.0.0.1]}}\n", 10, "catalog.name",
               "is a zone of this config");
  expect_error(base + "catalog: {name: catalog.invalid}\n", 10, "catalog.transfer", "required field is missing");
  expect_error(base + "catalog: {transfer: {allow: [127.0.0.1]}}\n", 10, "catalog.name", "required field is missing");
  expect_error(base + "catalog: {name: 'bad..name', transfer: {allow: [127.0.0.1]}}\n", 10, "catalog.name",
               "not a valid domain name");
  expect_error(base + "catalog: {name: catalog.invalid, transfer: {view: current, allow: [127.0.0.1]}}\n", 10,
               "catalog.transfer.view", "no dynamic records");
  expect_error(base + "catalog: {name: catalog.invalid, transfer: {allow: [nowhere]}}\n", 10,
               "catalog.transfer.allow[0]", "'nowhere'");
  expect_error(base + "catalog: {name: catalog.invalid, transfers: {allow: [127.0.0.1]}}\n", 10, "catalog.transfers",
               "unknown key");
  std::string none = base;
  none.erase(none.find("    transfer:"), none.find("    records:") - none.find("    transfer:"));
  expect_error(none + "catalog: {name: catalog.invalid, transfer: {allow: [127.0.0.1]}}\n", 9, "catalog",
               "no zone has transfer:");
}

// tsig_keys comes first: the zone's transfer: is then at line 10.
std::string keyed(const std::string& transfer) {
  return "tsig_keys:\n  - {name: xfr-key, secret_file: /etc/gtmesh/xfr.key}\n  - {name: Other., secret_file: o.key}\n" +
         zone_with(transfer);
}

TEST(transfer_config, tsig_keys_and_keyed_rules_load_into_the_model) {
  auto r = load(keyed(R"({allow: [{key: xfr-key}, {address: 10.0.0.0/8, key: other}, 127.0.0.1],
              notify: [{address: "192.0.2.53:5353", key: xfr-key}, 192.0.2.54]})"));
  ASSERT_TRUE(r.ok()) << r.report();
  ASSERT_EQ(r.cfg->tsig_keys.size(), 2u);
  EXPECT_EQ(r.cfg->tsig_keys[0].name, "xfr-key.");
  EXPECT_EQ(r.cfg->tsig_keys[0].secret_file, "/etc/gtmesh/xfr.key");
  EXPECT_EQ(r.cfg->tsig_keys[1].name, "other.");
  const transfer_settings& t = r.cfg->zones[0].transfer;
  const ip_address anywhere = *ip_address::parse("203.0.113.9"), inside = *ip_address::parse("10.1.2.3");
  EXPECT_TRUE(t.allows(anywhere, 0));   // xfr-key from any address
  EXPECT_FALSE(t.allows(anywhere, 1));  // other only from 10/8
  EXPECT_FALSE(t.allows(anywhere));     // unsigned
  EXPECT_TRUE(t.allows(inside, 1));
  EXPECT_FALSE(t.allows(inside));       // 10/8 asks for the key
  EXPECT_TRUE(t.allows(*ip_address::parse("127.0.0.1")));     // by address alone
  EXPECT_TRUE(t.allows(*ip_address::parse("127.0.0.1"), 1)); // a signed request from it too
  ASSERT_EQ(t.notify.size(), 2u);
  EXPECT_EQ(t.notify[0].key, 0);
  // XoT's mutual TLS: a client certificate's name, alone or with more.
  auto m = load(keyed("{allow: [{tls_client: Secondary.Test.}, {address: 10.0.0.0/8, tls_client: b.test, key: other}]}"));
  ASSERT_TRUE(m.ok()) << m.report();
  const transfer_settings& mt = m.cfg->zones[0].transfer;
  EXPECT_EQ(mt.allow[0].tls_client, "secondary.test"); // as certificate names are compared: lowercase, no dot
  const std::vector<std::string> secondary{"secondary.test"}, b{"b.test"};
  EXPECT_TRUE(mt.allows(anywhere, -1, secondary));
  EXPECT_FALSE(mt.allows(anywhere));
  EXPECT_FALSE(mt.allows(anywhere, -1, b));
  EXPECT_FALSE(mt.allows(inside, -1, b)); // b.test asks for the key too
  EXPECT_TRUE(mt.allows(inside, 1, b));
  EXPECT_EQ(t.notify[0].port, 5353);
  EXPECT_EQ(t.notify[1].key, -1);
}

TEST(transfer_config, every_tsig_mistake_names_its_line_and_field) {
  expect_error(keyed("{allow: [{key: nokey}]}"), 10, "allow[0].key", "no key 'nokey' in tsig_keys");
  expect_error(zone_with("{allow: [{key: xfr-key}]}"), 7, "allow[0].key", "(there is none)");
  expect_error(keyed("{allow: [{}]}"), 10, "allow[0]", "an address, a key, a TLS client or a mix");
  expect_error(keyed("{allow: [{tls_client: [a]}]}"), 10, "allow[0].tls_client", "expected a string");
  expect_error(keyed("{allow: [127.0.0.1], notify: [{address: 192.0.2.1, key: nokey}]}"), 10, "notify[0].key",
               "no key 'nokey'");
  expect_error(keyed("{allow: [127.0.0.1], notify: [{key: xfr-key}]}"), 10, "notify[0].address",
               "required field is missing");
  expect_error(keyed("{allow: [127.0.0.1], notify: [{address: nowhere}]}"), 10, "notify[0].address", "'nowhere'");
  expect_error("tsig_keys:\n  - {name: a, secret_file: a.key}\n  - {name: A., secret_file: b.key}\n" +
                 zone_with("{allow: [127.0.0.1]}"),
               3, "tsig_keys[1].name", "a second key named");
  expect_error("tsig_keys:\n  - {name: a}\n" + zone_with("{allow: [127.0.0.1]}"), 2, "tsig_keys[0].secret_file",
               "required field is missing");
  expect_error("tsig_keys:\n  - {name: a, secret: c2VjcmV0, secret_file: a.key}\n" + zone_with("{allow: [127.0.0.1]}"),
               2, "tsig_keys[0].secret", "unknown key");
  expect_error("tsig_keys: {name: a}\n" + zone_with("{allow: [127.0.0.1]}"), 1, "tsig_keys", "expected a list");
}

} // namespace
} // namespace gtmesh
