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
  expect_error(zone_with("{allow: [127.0.0.1], notify: [{address: 192.0.2.1}]}"), 7, "transfer.notify[0]",
               "expected ADDRESS");
  expect_error(zone_with("{allow: [127.0.0.1], journal: 10}"), 7, "transfer.journal", "unknown key");
  expect_error(zone_with("[127.0.0.1]"), 7, "transfer", "");
}

TEST(transfer_config, a_signed_zone_cannot_be_transferred_yet) {
  expect_error(zone_with("{allow: [127.0.0.1]}", "    dnssec: {key: k.pem}\n"), 8, "transfer",
               "would serve it unsigned");
}

} // namespace
} // namespace gtmesh
