// The loader's rules for ALIAS (docs/dns.md, "ALIAS records"): the
// resolver: section, ALIAS records, alias endpoints, and no CNAME at a zone
// apex -- an error for an operator's config, a record left out with a
// warning for a committed one (config_origin). Every error names its line.

#include "core/config/config_fields.hpp"
#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gtmesh {
namespace {

// Lines: 1 datacenters, 4 probes, 7 resolver, 8 zones, 9 the zone, 13 its first record.
const std::string head = R"(datacenters:
  - {name: fra}
  - {name: iad}
probes:
  - {name: web, path: /health, port: 8080}
  - {name: bare-tcp, protocol: tcp}
resolver: {servers: ["127.0.0.1:5353", "2001:db8::53", "[2001:db8::54]:53"], min_ttl: 10, max_ttl: 600}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
)";

/// `head` with `records` appended to the zone (the first is line 14) and
/// `rest` after the zones.
std::string with_records(const std::string& records, const std::string& rest = "") {
  return head + records + rest;
}

std::string without_resolver(std::string text) {
  auto at = text.find("resolver:");
  return text.erase(at, text.find('\n', at) + 1 - at);
}

load_result load(const std::string& yaml, config_origin origin = config_origin::operator_file) {
  return load_config_text(yaml, "cfg.yaml", routing_methods(), config_scope::whole, origin);
}

bool has(const config_errors& list, int line, const std::string& field, const std::string& message) {
  return std::any_of(list.begin(), list.end(), [&](const config_error& e) {
    return e.file == "cfg.yaml" && e.line == line && e.field.find(field) != std::string::npos &&
           e.message.find(message) != std::string::npos;
  });
}

void expect_error(const std::string& yaml, int line, const std::string& field, const std::string& message) {
  auto r = load(yaml);
  ASSERT_FALSE(r.ok()) << "accepted:\n" << yaml;
  EXPECT_TRUE(has(r.errors, line, field, message))
    << "wanted line " << line << " field~" << field << " message~" << message << "\ngot:\n" << r.report();
}

const record* find_record(const config& cfg, const std::string& name, dns::rr_type type) {
  for (const auto& z : cfg.zones)
    for (const auto& r : z.records)
      if (r.name == name && r.type == type)
        return &r;
  return nullptr;
}

TEST(alias_config, an_alias_record_and_the_resolver_section_load_into_the_model) {
  auto r = load(with_records("      - {name: \"@\", type: ALIAS, target: lb.example.net., monitor: web}\n"
                       "      - {name: www, type: ALIAS, target: app, ttl: 20}\n"));
  ASSERT_TRUE(r.ok()) << r.report();
  const resolver_settings& rs = r.cfg->resolver;
  ASSERT_EQ(rs.servers.size(), 3u);
  EXPECT_EQ(rs.servers[0].text(), "127.0.0.1:5353");
  EXPECT_EQ(rs.servers[1].text(), "[2001:db8::53]:53");
  EXPECT_EQ(rs.servers[2].text(), "[2001:db8::54]:53");
  EXPECT_EQ(rs.min_ttl, 10u);
  EXPECT_EQ(rs.max_ttl, 600u);
  EXPECT_EQ(rs.timeout_ms, 2000);
  EXPECT_EQ(rs.keep_last_good_ms, 86'400'000);
  EXPECT_EQ(rs.keep_on_nxdomain_ms, 300'000);

  const record* apex = find_record(*r.cfg, "example.com.", dns::rr_type::alias);
  ASSERT_TRUE(apex && apex->alias);
  EXPECT_EQ(apex->mode, record_mode::alias);
  EXPECT_EQ(apex->alias->target, "lb.example.net.");
  EXPECT_EQ(apex->alias->monitor, "web");
  EXPECT_FALSE(apex->alias->ttl_given);
  EXPECT_EQ(apex->ttl, 600u) << "without ttl: the resolver's max_ttl bounds the answer, the target's TTL decides";
  const record* www = find_record(*r.cfg, "www.example.com.", dns::rr_type::alias);
  ASSERT_TRUE(www && www->alias);
  EXPECT_EQ(www->alias->target, "app.example.com.") << "a relative target is in the zone, as a CNAME's";
  EXPECT_TRUE(www->alias->ttl_given);
  EXPECT_EQ(www->ttl, 20u);
}

TEST(alias_config, every_resolver_error_names_its_line_and_field) {
  auto text = [&](const std::string& resolver) {
    std::string t = without_resolver(head);
    return t.insert(t.find("zones:"), resolver + "\n");
  };
  expect_error(text("resolver: {servers: [\"localhost:53\"]}"), 7, "resolver.servers", "not a resolver address");
  expect_error(text("resolver: {servers: [\"127.0.0.1:0\"]}"), 7, "resolver.servers", "not a resolver address");
  expect_error(text("resolver: {servers: [\"[2001:db8::1\"]}"), 7, "resolver.servers", "not a resolver address");
  expect_error(text("resolver: {timeout: 1s}"), 7, "resolver.servers", "required field is missing");
  expect_error(text("resolver: {servers: []}"), 7, "resolver.servers", "at least one");
  expect_error(text("resolver: {servers: [127.0.0.1], min_ttl: 60, max_ttl: 30}"), 7, "resolver.max_ttl",
               "min_ttl 60 is above max_ttl 30");
  expect_error(text("resolver: {servers: [127.0.0.1], min_ttl: 0}"), 7, "resolver.min_ttl", "out of range");
  expect_error(text("resolver: {servers: [127.0.0.1], timeout: 50ms}"), 7, "resolver.timeout", "out of range");
  expect_error(text("resolver: {servers: [127.0.0.1], attempts: 0}"), 7, "resolver.attempts", "out of range");
  expect_error(text("resolver: {servers: [127.0.0.1], keep_last_good: 1m, keep_on_nxdomain: 5m}"), 7,
               "resolver.keep_on_nxdomain", "longer than keep_last_good");
  expect_error(text("resolver: {servers: [127.0.0.1], ttl: 5}"), 7, "resolver.ttl", "unknown key");
  expect_error(text("resolver:\n  servers:\n  timeout: 1s"), 8, "resolver.servers", "has no value");
  expect_error(text("resolver: {servers: [1.1.1.1, 1.0.0.1, 8.8.8.8, 8.8.4.4, 9.9.9.9, 127.0.0.1, 127.0.0.2, "
                    "127.0.0.3, 127.0.0.4]}"),
               7, "resolver.servers", "at most 8");
}

TEST(alias_config, every_alias_record_error_names_the_alias_line) {
  const std::string alias = "      - {name: \"@\", type: ALIAS, target: lb.example.net.}\n";
  // No resolver: the error is at the ALIAS, which is what needs it.
  expect_error(without_resolver(with_records(alias)), 13, "records[@].type", "needs a top-level resolver");
  expect_error(with_records("      - {name: \"@\", type: ALIAS}\n"), 14, "target", "required field is missing");
  expect_error(with_records("      - {name: \"@\", type: ALIAS, target: 192.0.2.1}\n"), 14, "target", "is an address");
  expect_error(with_records("      - {name: \"@\", type: ALIAS, target: \"*.lb.example.net.\"}\n"), 14, "target",
               "not a valid host name");
  expect_error(with_records("      - {name: a, type: ALIAS, target: a}\n"), 14, "target", "cannot name itself");
  expect_error(with_records("      - {name: a, type: ALIAS, target: b, answers: [192.0.2.1]}\n"), 14, "answers",
               "has a target, not answers");
  expect_error(with_records("      - {name: a, type: ALIAS, target: b, profile: p}\n"), 14, "profile", "not profile");
  expect_error(with_records("      - {name: a, type: ALIAS, target: b, min_ttl: 5}\n"), 14, "min_ttl", "target's TTL");
  expect_error(with_records("      - {name: a, type: ALIAS, target: b, monitor: nope}\n"), 14, "monitor", "unknown probe");
  expect_error(with_records("      - {name: a, type: ALIAS, target: b, monitor: bare-tcp}\n"), 14, "monitor",
               "tcp without a port");
  expect_error(with_records("      - {name: a, type: A, target: b, answers: [192.0.2.1]}\n"), 14, "records[a].target",
               "only an ALIAS record has a target");
  expect_error(with_records("      - {name: a, type: A, monitor: web, answers: [192.0.2.1]}\n"), 14, "monitor",
               "only an ALIAS record has a monitor");
  // A, AAAA or CNAME beside it: at the ALIAS's line whichever comes first.
  expect_error(with_records("      - {name: a, type: A, answers: [192.0.2.1]}\n"
                      "      - {name: a, type: ALIAS, target: lb.example.net.}\n"),
               15, "records[a.example.com.]", "no A, AAAA or CNAME record may share its name");
  expect_error(with_records("      - {name: a, type: ALIAS, target: lb.example.net.}\n"
                      "      - {name: a, type: AAAA, answers: [\"2001:db8::1\"]}\n"),
               14, "records[a.example.com.]", "no A, AAAA or CNAME");
  expect_error(with_records("      - {name: a, type: ALIAS, target: lb.example.net.}\n"
                      "      - {name: a, type: CNAME, answers: [lb.example.net.]}\n"),
               14, "records[a.example.com.]", "no A, AAAA or CNAME");
  expect_error(with_records("      - {name: a, type: ALIAS, target: lb.example.net.}\n"
                      "      - {name: a, type: ALIAS, target: lb2.example.net.}\n"),
               15, "records", "duplicate record a.example.com. ALIAS");
  // Other types beside an ALIAS are fine (MX and TXT at the apex).
  auto ok = load(with_records(alias + "      - {name: \"@\", type: MX, answers: [\"10 mail.example.com.\"]}\n"
                        "      - {name: \"@\", type: TXT, answers: [\"v=spf1 -all\"]}\n"));
  EXPECT_TRUE(ok.ok()) << ok.report();
  EXPECT_TRUE(ok.warnings.empty()) << ok.report();
}

TEST(alias_config, alias_endpoints_load_and_their_errors_name_the_endpoint_line) {
  const std::string profile = R"(profiles:
  - name: apex
    method: priority
    endpoints:
      - {name: primary, kind: alias, target: my-elb.eu-west-1.elb.amazonaws.com, monitor: web}
      - {name: secondary, kind: alias, target: bucket.s3-website.example.net.}
)";
  auto r = load(with_records("      - {name: \"@\", type: A, profile: apex}\n", profile));
  ASSERT_TRUE(r.ok()) << r.report();
  const auto& eps = r.cfg->profiles[0].endpoints;
  ASSERT_EQ(eps.size(), 2u);
  EXPECT_EQ(eps[0].kind, endpoint_kind::alias);
  EXPECT_EQ(eps[0].target, "my-elb.eu-west-1.elb.amazonaws.com.");
  EXPECT_EQ(eps[0].monitor, "web");
  EXPECT_TRUE(eps[0].answers.empty());
  // Line 15 is `profiles:`, the first endpoint line 19.
  auto endpoint = [&](const std::string& line) {
    return with_records("", "profiles:\n  - name: apex\n    method: priority\n    endpoints:\n" + line);
  };
  expect_error(without_resolver(endpoint("      - {name: primary, kind: alias, target: lb.example.net.}\n")), 17,
               "endpoints[primary].kind", "needs a top-level resolver");
  expect_error(endpoint("      - {name: primary, kind: alias}\n"), 18, "endpoints[primary].target", "needs a target");
  expect_error(endpoint("      - {name: primary, kind: alias, target: 192.0.2.1}\n"), 18, "target", "use kind: external");
  expect_error(endpoint("      - {name: primary, kind: alias, target: a, answers: [192.0.2.1]}\n"), 18, "answers",
               "answers its target's addresses");
  expect_error(endpoint("      - {name: primary, kind: alias, target: a, dc: fra}\n"), 18, "dc", "only dc endpoints");
  expect_error(endpoint("      - {name: primary, kind: alias, target: a, monitor: nope}\n"), 18, "monitor",
               "unknown probe");
  expect_error(endpoint("      - {name: primary, kind: aliases, target: a}\n"), 18, "kind",
               "allowed: external, dc, nested, alias");
  // Multivalue answers only addresses written in the config.
  expect_error(with_records("", "profiles:\n  - name: mv\n    method: multivalue\n    endpoints:\n"
                          "      - {name: a, kind: alias, target: lb.example.net.}\n"),
               18, "endpoints[a]", "multivalue profiles take only external endpoints");
}

TEST(alias_config, a_cname_at_the_apex_is_an_error_at_its_line_and_left_out_of_a_committed_config) {
  const std::string text = with_records("      - {name: \"@\", type: CNAME, answers: [lb.example.net.]}\n"
                                  "      - {name: www, type: A, answers: [192.0.2.1]}\n");
  expect_error(text, 14, "records[example.com.]", "a CNAME at the zone apex");
  expect_error(text, 14, "records[example.com.]", "use type: ALIAS");

  // The same text as a committed config (a decider loading its store or
  // its log after the upgrade): served without that record, warned about.
  auto committed = load(text, config_origin::committed);
  ASSERT_TRUE(committed.ok()) << committed.report();
  EXPECT_FALSE(find_record(*committed.cfg, "example.com.", dns::rr_type::cname));
  EXPECT_TRUE(find_record(*committed.cfg, "www.example.com.", dns::rr_type::a)) << "the rest of the zone is served";
  EXPECT_TRUE(has(committed.warnings, 14, "records[example.com.]", "served without the record"))
    << committed.report();
  // Every other rule still refuses a committed config.
  auto broken = load(text + "      - {name: www, type: A, answers: [192.0.2.2]}\n", config_origin::committed);
  EXPECT_FALSE(broken.ok());

  // Below the apex a CNAME beside other data stays a warning (SPEC 2).
  auto below = load(with_records("      - {name: www, type: CNAME, answers: [lb.example.net.]}\n"
                           "      - {name: www, type: MX, answers: [\"10 mail.example.com.\"]}\n"));
  ASSERT_TRUE(below.ok()) << below.report();
  EXPECT_TRUE(has(below.warnings, 9, "records", "CNAME beside other types")) << below.report();
}

TEST(alias_config, a_profile_at_the_apex_that_answers_a_host_name_is_a_cname_at_the_apex) {
  const std::string profiles = R"(profiles:
  - name: apex
    method: priority
    endpoints:
      - {name: eu, kind: external, target: 192.0.2.10}
      - {name: lb, kind: external, target: lb.example.net}
  - name: outer
    method: weighted
    endpoints:
      - {name: inner, kind: nested, profile: apex}
  - name: by-address
    method: priority
    endpoints:
      - {name: eu, kind: external, target: 192.0.2.10}
      - {name: elb, kind: alias, target: lb.example.net}
)";
  const std::string apex = with_records("      - {name: \"@\", type: A, profile: apex}\n", profiles);
  expect_error(apex, 14, "records[example.com.]", "endpoint 'lb' answers the host name lb.example.net.");
  // Through a nested profile too.
  expect_error(with_records("      - {name: \"@\", type: A, profile: outer}\n", profiles), 14, "records[example.com.]",
               "profile 'apex' endpoint 'lb'");
  // The same profile below the apex is fine, and so is one of addresses and aliases at it.
  auto www = load(with_records("      - {name: www, type: A, profile: apex}\n"
                         "      - {name: \"@\", type: A, profile: by-address}\n", profiles));
  EXPECT_TRUE(www.ok()) << www.report();
  // A host-name fail_safe answers a CNAME as well.
  expect_error(with_records("      - {name: \"@\", type: A, profile: fs}\n",
                      "profiles:\n  - name: fs\n    method: priority\n    fail_safe: [sorry.example.net.]\n"
                      "    endpoints:\n      - {name: eu, kind: external, target: 192.0.2.10}\n"),
               14, "records[example.com.]", "profile 'fs' fail_safe answers a host name");
  // Committed: the record is left out, with a warning at its line.
  auto committed = load(apex, config_origin::committed);
  ASSERT_TRUE(committed.ok()) << committed.report();
  EXPECT_FALSE(find_record(*committed.cfg, "example.com.", dns::rr_type::a));
  EXPECT_TRUE(has(committed.warnings, 14, "records[example.com.]", "endpoint 'lb'")) << committed.report();
}

TEST(alias_config, the_field_table_knows_the_new_keys) {
  auto keys = [](std::string_view object) {
    auto k = config_fields::keys_of(object);
    return std::vector<std::string_view>(k.begin(), k.end());
  };
  auto holds = [](const std::vector<std::string_view>& v, std::string_view k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  EXPECT_TRUE(holds(keys("config"), "resolver"));
  for (auto k : {"servers", "timeout", "attempts", "min_ttl", "max_ttl", "keep_last_good", "keep_on_nxdomain"})
    EXPECT_TRUE(holds(keys("resolver"), k)) << k;
  EXPECT_TRUE(holds(keys("record"), "target"));
  EXPECT_TRUE(holds(keys("record"), "monitor"));
  bool alias_type = false, alias_kind = false;
  for (const auto& f : config_fields::get("record").fields)
    if (f.key == "type")
      alias_type = std::find(f.values.begin(), f.values.end(), "ALIAS") != f.values.end();
  for (const auto& f : config_fields::get("endpoint").fields)
    if (f.key == "kind")
      alias_kind = std::find(f.values.begin(), f.values.end(), "alias") != f.values.end();
  EXPECT_TRUE(alias_type);
  EXPECT_TRUE(alias_kind);
}

} // namespace
} // namespace gtmesh
