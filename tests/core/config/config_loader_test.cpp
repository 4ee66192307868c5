// Every config rule the loader enforces has a test: the error names the
// file, the line and the field, and the config is rejected as a whole.

#include "core/config/config_loader.hpp"
#include "core/config/loader/loader.hpp"
#include "core/routing/all_methods.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/routing_plan.hpp"

#include "tests/test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <thread>

namespace gtmesh {
namespace {

using test::source_dir;

// A valid base; tests replace or append lines. Line numbers below refer to
// the text as passed (line 1 = first line).
const std::string base = R"(datacenters:
  - {name: fra}
  - {name: iad}
probes:
  - {name: mon, path: /health}
services:
  - {name: web, backends: {fra: ["10.0.0.1:80"]}}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
)";

/// base with one more service line after `web` (it becomes line 8).
std::string with_service(const std::string& line) {
  std::string out = base;
  auto pos = out.find("zones:");
  return out.insert(pos, line);
}

load_result load(const std::string& yaml) {
  return load_config_text(yaml, "cfg.yaml", routing_methods());
}

/// Asserts exactly one error at `line` whose field contains `field` and whose
/// message contains `message`.
void expect_error(const std::string& yaml, int line, const std::string& field, const std::string& message) {
  auto r = load(yaml);
  ASSERT_FALSE(r.ok()) << "accepted:\n" << yaml;
  EXPECT_EQ(r.cfg, nullptr);
  bool found = false;
  for (const auto& e : r.errors)
    if (e.file == "cfg.yaml" && e.line == line && e.field.find(field) != std::string::npos &&
        e.message.find(message) != std::string::npos)
      found = true;
  EXPECT_TRUE(found) << "wanted line " << line << " field~" << field << " message~" << message << "\ngot:\n"
                     << r.report();
}

TEST(config_loader, the_base_and_every_shipped_example_are_valid) {
  auto r = load(base);
  EXPECT_TRUE(r.ok()) << r.report();
  int examples = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir() + "/configs")) {
    if (entry.path().extension() != ".yaml" || entry.path().string().find("/states/") != std::string::npos)
      continue;
    auto c = load_config_file(entry.path().string(), routing_methods());
    EXPECT_TRUE(c.ok()) << entry.path() << "\n" << c.report();
    if (c.ok() && entry.path().filename() == "dnssec.yaml" &&
        !std::filesystem::exists(entry.path().parent_path() / "keys/example.com.pem")) {
      // Its key does not ship (docs/dnssec.md makes it): a node refuses the
      // plan, naming the config's line and the key file.
      auto compiled = compile_plan(c.cfg);
      EXPECT_FALSE(compiled.plan);
      EXPECT_EQ(compiled.error.find(entry.path().string() + ":"), 0u) << compiled.error;
      EXPECT_NE(compiled.error.find(": zone example.com.: dnssec.key: "), std::string::npos) << compiled.error;
      EXPECT_NE(compiled.error.find("configs/examples/keys/example.com.pem: No such file"), std::string::npos)
        << compiled.error;
    } else if (c.ok()) {
      EXPECT_TRUE(compile_plan(c.cfg).plan) << entry.path();
    }
    ++examples;
  }
  EXPECT_GE(examples, 9);
}

TEST(config_loader, the_measurement_scope_keeps_no_node_of_the_zones_and_errors_after_them_keep_their_lines) {
  // base's zones run to line 13; an agent reads them as YAML (a syntax
  // error there is one to it too) and keeps nothing of them.
  std::string zones_then_geo = base + "      - {name: x, type: A, answer: [192.0.2.1]}\n" + "geo: {databse: /x}\n";
  auto agent = load_config_text(zones_then_geo, "cfg.yaml", routing_methods(), config_scope::measurement);
  ASSERT_FALSE(agent.ok());
  ASSERT_EQ(agent.errors.size(), 2u) << agent.report(); // the typo, and the key it misses
  EXPECT_EQ(agent.errors[0].line, 15);
  EXPECT_EQ(agent.errors[0].field, "geo.databse");
  auto unclosed = load_config_text(base + "      - {name: x, type: A, answers: [192.0.2.1}\n", "cfg.yaml",
                                   routing_methods(), config_scope::measurement);
  ASSERT_FALSE(unclosed.ok());
  EXPECT_NE(unclosed.errors[0].message.find("YAML syntax"), std::string::npos) << unclosed.report();
  EXPECT_EQ(unclosed.errors[0].line, 14) << unclosed.report();
}

TEST(config_loader, the_measurement_scope_reads_every_section_but_the_zones) {
  // What an agent loads: services and probes as the whole loader reads them,
  // the zones not at all (a broken record is the deciders' to refuse).
  std::string broken_record = base + "      - {name: x, type: A, answer: [192.0.2.1]}\n";
  ASSERT_FALSE(load(broken_record).ok());
  auto r = load_config_text(broken_record, "cfg.yaml", routing_methods(), config_scope::measurement);
  ASSERT_TRUE(r.ok()) << r.report();
  EXPECT_TRUE(r.cfg->zones.empty());
  ASSERT_EQ(r.cfg->services.size(), 1u);
  EXPECT_EQ(r.cfg->services[0].name, "web");
  ASSERT_EQ(r.cfg->probes.size(), 1u);
  EXPECT_TRUE(r.cfg->find_dc("iad"));
  // rum.join is checked against the zones: in the whole config only (an
  // agent refused every version of a config with rum.join before).
  std::string with_join = base + "rum:\n  join: rum.nowhere.test\n  apps:\n    - {name: shop, keys: [" +
                          std::string(32, 'k') + "]}\n";
  auto whole = load(with_join);
  ASSERT_FALSE(whole.ok());
  EXPECT_NE(whole.report().find("is not below the apex of any zone"), std::string::npos) << whole.report();
  auto joined = load_config_text(with_join, "cfg.yaml", routing_methods(), config_scope::measurement);
  EXPECT_TRUE(joined.ok()) << joined.report();
  // A typo outside the zones is still an error, with its line.
  auto typo = load_config_text(with_service("  - {name: api, backend: {fra: [\"10.0.0.2:80\"]}}\n"), "cfg.yaml",
                               routing_methods(), config_scope::measurement);
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.errors[0].line, 8);
  EXPECT_NE(typo.errors[0].field.find("backend"), std::string::npos) << typo.report();
}

TEST(config_loader, yaml_syntax_errors_name_the_line) {
  expect_error(base + "      - {name: x, type: A, answers: [192.0.2.1\n", 15, "", "YAML syntax");
}

TEST(config_loader, unknown_keys_are_rejected_with_the_allowed_ones) {
  expect_error(base + "      - {name: x, type: A, answer: [192.0.2.1]}\n", 14, "records[x].answer", "unknown key");
  expect_error("colour: blue\n" + base, 1, "colour", "allowed: cluster");
}

TEST(config_loader, duplicate_keys_are_rejected) {
  expect_error(base + "      - {name: x, type: A, ttl: 5, ttl: 6, answers: [192.0.2.1]}\n", 14, "ttl", "duplicate key");
}

TEST(config_loader, wrong_types_are_rejected) {
  expect_error(base + "      - {name: x, type: A, ttl: soon, answers: [192.0.2.1]}\n", 14, "records[x].ttl",
               "expected an integer");
  expect_error(base + "      - {name: x, type: A, answers: [not-an-ip]}\n", 14, "records[x].answers[0]",
               "expected an IPv4 address");
  expect_error(base + "      - {name: x, type: AAAA, answers: [192.0.2.1]}\n", 14, "answers[0]", "IPv6");
  expect_error("datacenters: {name: fra}\n", 1, "datacenters", "expected a list");
}

std::string profile(const std::string& method, const std::string& endpoints, const std::string& extra = "") {
  return base + "profiles:\n  - name: p\n    method: " + method + "\n" + extra + "    endpoints:\n" + endpoints;
}

TEST(config_loader, priority_and_weight_must_be_1_to_1000) {
  // base is 13 lines; "profiles:" is line 14, endpoints start at line 18.
  expect_error(profile("priority", "      - {name: a, kind: external, target: 192.0.2.1, priority: 0}\n"), 18,
               "endpoints[a].priority", "out of range 1..1000");
  expect_error(profile("weighted", "      - {name: a, kind: external, target: 192.0.2.1, weight: 1001}\n"), 18,
               "endpoints[a].weight", "out of range 1..1000");
  expect_error(base + "      - {name: x, type: A, dc: {source: host, metric: status, answers: {fra: [{address: 192.0.2.1, "
                      "weight: 0}]}}}\n",
               14, "weight", "out of range 1..1000");
}

TEST(config_loader, weighted_addresses_are_read_in_any_order_and_every_wrong_one_is_worded) {
  auto r = load(base + "      - {name: w, type: A, answers: [{address: 192.0.2.1, weight: 3}, {weight: 2, address: "
                       "192.0.2.2}, {address: '192.0.2.3'}, 192.0.2.4, {address: 192.0.2.5}]}\n"
                       "      - {name: w6, type: AAAA, answers: [{address: '2001:db8::1', weight: 1000}]}\n");
  ASSERT_TRUE(r.ok()) << r.report();
  std::vector<std::pair<std::string, uint32_t>> got;
  for (const auto& rec : r.cfg->zones[0].records)
    for (const auto& item : r.cfg->answers_of(rec.plain))
      got.emplace_back(r.cfg->value_of(item).address.to_string(), item.weight);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, uint32_t>>{{"192.0.2.53", 1},
                                                                 {"192.0.2.1", 3},
                                                                 {"192.0.2.2", 2},
                                                                 {"192.0.2.3", 1},
                                                                 {"192.0.2.4", 1},
                                                                 {"192.0.2.5", 1},
                                                                 {"2001:db8::1", 1000}}));
  auto bad = [](const std::string& answer) {
    return base + "      - {name: x, type: A, answers: [192.0.2.9, " + answer + "]}\n";
  };
  expect_error(bad("{address: 192.0.2.1, weight: 0}"), 14, "records[x].answers[1].weight", "out of range 1..1000");
  expect_error(bad("{address: 192.0.2.1, weight: 1001}"), 14, "answers[1].weight", "out of range 1..1000");
  expect_error(bad("{address: 192.0.2.1, weight: 2.5}"), 14, "answers[1].weight", "expected an integer");
  expect_error(bad("{address: 192.0.2.1, weight: [2]}"), 14, "answers[1].weight", "expected an integer");
  expect_error(bad("{address: '2001:db8::1', weight: 2}"), 14, "answers[1].address", "expected an IPv4 address");
  expect_error(bad("{address: 192.0.2.1, wieght: 2}"), 14, "answers[1].wieght", "unknown key");
  expect_error(bad("{address: 192.0.2.1, address: 192.0.2.2}"), 14, "answers[1].address", "duplicate key");
  expect_error(bad("{weight: 2}"), 14, "answers[1].address", "required field is missing");
  expect_error(bad("{address: ~, weight: 2}"), 14, "answers[1].address", "has no value");
  expect_error(bad("{address: 192.0.2.1, weight: ~}"), 14, "answers[1].weight", "has no value");
  expect_error(bad("{address: [192.0.2.1]}"), 14, "answers[1].address", "expected a string");
  expect_error(bad("{}"), 14, "answers[1].address", "required field is missing");
}

TEST(config_loader, duplicate_priorities_are_rejected_naming_both_endpoints) {
  expect_error(profile("priority", "      - {name: a, kind: external, target: 192.0.2.1, priority: 5}\n"
                                   "      - {name: b, kind: external, target: 192.0.2.2, priority: 5}\n"),
               19, "endpoints[b].priority", "duplicate priority 5 (also endpoint 'a')");
  // An unset priority defaults to the list position and collides too.
  expect_error(profile("priority", "      - {name: a, kind: external, target: 192.0.2.1, priority: 2}\n"
                                   "      - {name: b, kind: external, target: 192.0.2.2}\n"),
               19, "endpoints[b].priority", "defaults to the position");
}

TEST(config_loader, overlapping_subnets_across_endpoints_are_rejected) {
  expect_error(profile("subnet", "      - {name: a, kind: external, target: 192.0.2.1, subnets: [10.0.0.0/8]}\n"
                                 "      - {name: b, kind: external, target: 192.0.2.2, subnets: [\"10.1.0.0-10.1.0.9\"]}\n"),
               19, "endpoints[b].subnets", "overlaps 10.0.0.0-10.255.255.255 of endpoint 'a'");
  expect_error(profile("subnet", "      - {name: a, kind: external, target: 192.0.2.1, subnets: [\"2001:db8::/32\", "
                                 "\"2001:db8:1::/48\"]}\n"),
               18, "endpoints[a].subnets", "of the same endpoint");
  expect_error(profile("subnet", "      - {name: a, kind: external, target: 192.0.2.1, subnets: [10.0.0.1/8]}\n"), 18,
               "subnets", "not a CIDR prefix");
}

TEST(config_loader, a_region_mapped_to_two_endpoints_is_rejected) {
  std::string yaml = profile("geographic", "      - {name: a, kind: external, target: 192.0.2.1, regions: [DE, FR]}\n"
                                           "      - {name: b, kind: external, target: 192.0.2.2, regions: [fr]}\n");
  yaml += "geo: {database: " + source_dir() + "/tests/data/test.mmdb}\n";
  expect_error(yaml, 19, "endpoints[b].regions", "region FR is already mapped to endpoint 'a'");
}

TEST(config_loader, unknown_regions_and_missing_geo_database) {
  expect_error(profile("geographic", "      - {name: a, kind: external, target: 192.0.2.1, regions: [XX, DE-BY]}\n") +
                 "geo: {database: " + source_dir() + "/tests/data/test.mmdb}\n",
               18, "regions", "unknown region 'XX'");
  expect_error(profile("geographic", "      - {name: a, kind: external, target: 192.0.2.1, regions: [WORLD]}\n"), 1,
               "geo.database", "need geo.database");
  expect_error(base + "geo: {database: /nonexistent.mmdb}\n", 14, "geo.database", "file not found");
}

TEST(config_loader, multivalue_takes_only_external_ip_endpoints) {
  expect_error(profile("multivalue", "      - {name: a, kind: external, target: app.example.net}\n"), 18,
               "endpoints[a]", "only external endpoints whose target is an IPv4 or IPv6 address");
  expect_error(profile("multivalue", "      - {name: a, kind: dc, dc: fra, answers: [192.0.2.1]}\n"), 18, "endpoints[a]",
               "only external endpoints");
}

TEST(config_loader, probe_body_match_is_limited_to_4090_characters) {
  std::string ok(4090, 'x'), bad(4091, 'x');
  EXPECT_TRUE(load(base + "probes2: 1\n").errors.size() == 1); // sanity: the helper sees errors
  auto good = load("probes:\n  - {name: p, match: {body: " + ok + "}}\n" + base.substr(base.find("services:")) +
                   "datacenters: [{name: fra}]\n");
  EXPECT_TRUE(good.ok()) << good.report().substr(0, 300);
  expect_error("probes:\n  - {name: p, match: {body: " + bad + "}}\n" + base.substr(base.find("services:")) +
                 "datacenters: [{name: fra}]\n",
               2, "probes[p].match.body", "4091 characters; the limit is 4090");
}

TEST(config_loader, probe_path_must_start_with_a_slash) {
  expect_error("probes:\n  - {name: p, path: health}\n" + base.substr(base.find("services:")) + "datacenters: [{name: fra}]\n",
               2, "probes[p].path", "must start with '/'");
  expect_error(with_service("  - {name: api, probe: {path: \"x/y\"}}\n"), 8, "services[api].probe.path",
               "must start with '/'");
}

TEST(config_loader, a_probes_quorum_is_any_majority_or_at_least_n_of_the_datacenters) {
  auto probe_with = [](const std::string& quorum) {
    std::string yaml = base;
    return yaml.replace(yaml.find("{name: mon, path: /health}"), 26, "{name: mon, path: /health, quorum: " + quorum + "}");
  };
  for (const auto& [text, kind, count] : {std::tuple{"any", health::quorum_kind::any, 1},
                                          std::tuple{"majority", health::quorum_kind::majority, 0},
                                          std::tuple{"{at_least: 2}", health::quorum_kind::at_least, 2}}) {
    auto r = load(probe_with(text));
    ASSERT_TRUE(r.ok()) << r.report();
    EXPECT_EQ(r.cfg->probes[0].quorum, (health::quorum_rule{kind, count})) << text;
  }
  EXPECT_EQ(load(base).cfg->probes[0].quorum.kind, health::quorum_kind::any); // the default
  expect_error(probe_with("most"), 5, "probes[mon].quorum", "expected any, majority or {at_least: N} (got 'most')");
  expect_error(probe_with("{at_least: 3}"), 5, "probes[mon].quorum.at_least",
               "the config has 2 datacenter(s): the endpoint could never be healthy");
  expect_error(probe_with("{at_least: 0}"), 5, "probes[mon].quorum.at_least", "");
  expect_error(probe_with("{at_leest: 2}"), 5, "probes[mon].quorum.at_leest", "unknown key");
}

TEST(config_loader, a_dc_records_switch_margin_and_hold_down) {
  // Line 14 is the record.
  auto record = [](const std::string& extra, const std::string& criterion = "lowest") {
    return base + "      - {name: w, type: A, dc: {source: host, metric: cpu, criterion: " + criterion +
           ", answers: {fra: [192.0.2.1]}" + extra + "}}\n";
  };
  auto ok = load(record(", switch_margin: 10%, hold_down: 2m"));
  ASSERT_TRUE(ok.ok()) << ok.report();
  const switch_damping& d = ok.cfg->zones[0].records[1].dc->ranking->damping;
  EXPECT_EQ(d.margin, 10);
  EXPECT_TRUE(d.margin_is_percent);
  EXPECT_EQ(d.hold_ms, 120'000);
  EXPECT_EQ(d.text(), "switch_margin 10%, hold_down 2m");
  auto absolute = load(record(", switch_margin: 5"));
  ASSERT_TRUE(absolute.ok()) << absolute.report();
  EXPECT_FALSE(absolute.cfg->zones[0].records[1].dc->ranking->damping.margin_is_percent);
  EXPECT_FALSE(load(record("")).cfg->zones[0].records[1].dc->ranking->damping.any()); // the default: none
  expect_error(record(", switch_margin: lots"), 14, "switch_margin", "expected a non-negative number or percentage, got 'lots'");
  expect_error(record(", switch_margin: -1"), 14, "switch_margin", "non-negative");
  expect_error(record(", hold_down: soon"), 14, "hold_down", "expected a duration");
  expect_error(record(", hold_down: 2d"), 14, "hold_down", "out of range");
  expect_error(record(", switch_margn: 5"), 14, "switch_margn", "unknown key");
  expect_error(record(", hold_down: 1m", "{equals: 1}"), 14, "hold_down",
               "equals does not rank DCs: switch damping needs criterion lowest, highest or within");
}

TEST(config_loader, protect_is_true_or_a_map_of_fraction_window_and_hold) {
  // Line 14 is the record.
  auto record = [](const std::string& extra) {
    return base + "      - {name: w, type: A, dc: {source: host, metric: cpu, criterion: lowest"
                  ", answers: {fra: [192.0.2.1]}" + extra + "}}\n";
  };
  auto ok = load(record(", protect: {max_flip_fraction: 0.3, window: 45s, hold: 10m}"));
  ASSERT_TRUE(ok.ok()) << ok.report();
  const monitor_protection& p = ok.cfg->zones[0].records[1].dc->ranking->protect;
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.max_flip_fraction, 0.3);
  EXPECT_EQ(p.window_ms, 45'000);
  EXPECT_EQ(p.hold_ms, 600'000);
  EXPECT_EQ(p.text(), "protect: more than 30% turn unavailable within 45s, hold 10m");
  auto defaults = load(record(", protect: true"));
  ASSERT_TRUE(defaults.ok()) << defaults.report();
  const monitor_protection& dp = defaults.cfg->zones[0].records[1].dc->ranking->protect;
  EXPECT_TRUE(dp.enabled);
  EXPECT_EQ(dp.max_flip_fraction, 0.5);
  EXPECT_EQ(dp.hold_ms, 300'000);
  EXPECT_FALSE(load(record("")).cfg->zones[0].records[1].dc->ranking->protect.enabled); // the default: off
  EXPECT_FALSE(load(record(", protect: false")).cfg->zones[0].records[1].dc->ranking->protect.enabled);
  expect_error(record(", protect: maybe"), 14, "protect", "expected true, false or a map");
  expect_error(record(", protect: {max_flip_fraction: 1}"), 14, "protect.max_flip_fraction", "up to (not including) 1");
  expect_error(record(", protect: {max_flip_fraction: lots}"), 14, "protect.max_flip_fraction", "expected a number");
  expect_error(record(", protect: {window: 2h}"), 14, "protect.window", "out of range");
  expect_error(record(", protect: {hold: soon}"), 14, "protect.hold", "expected a duration");
  expect_error(record(", protect: {hld: 5m}"), 14, "protect.hld", "unknown key");
}

TEST(config_loader, nested_profile_cycles_are_rejected_showing_the_cycle) {
  std::string yaml = base + R"(profiles:
  - name: p1
    method: priority
    endpoints: [{name: to2, kind: nested, profile: p2}]
  - name: p2
    method: weighted
    endpoints: [{name: to3, kind: nested, profile: p3}]
  - name: p3
    method: weighted
    endpoints: [{name: back, kind: nested, profile: p1}]
)";
  expect_error(yaml, 23, "profiles[p3].endpoints[back].profile", "cycle: p1 -> p2 -> p3 -> p1");
}

TEST(config_loader, references_to_unknown_dcs_services_profiles_and_probes) {
  expect_error(base + "      - {name: x, type: A, dc: {source: host, metric: status, answers: {ams: [192.0.2.1]}}}\n", 14,
               "dc.answers.ams", "unknown datacenter 'ams'");
  expect_error(base + "      - {name: x, type: A, dc: {source: service, service: db, metric: status, answers: {fra: "
                      "[192.0.2.1]}}}\n",
               14, "dc.service", "unknown service 'db'");
  expect_error(base + "      - {name: x, type: A, profile: nope}\n", 14, "records[x].profile", "unknown profile 'nope'");
  expect_error(profile("priority", "      - {name: a, kind: nested, profile: ghost}\n"), 18, "endpoints[a].profile",
               "unknown profile 'ghost'");
  expect_error(profile("priority", "      - {name: a, kind: external, target: 192.0.2.1, monitor: nomon}\n"), 18,
               "endpoints[a].monitor", "unknown probe 'nomon'");
  expect_error(profile("priority", "      - {name: a, kind: dc, dc: ams, answers: [192.0.2.1]}\n"), 18, "endpoints[a].dc",
               "unknown datacenter 'ams'");
  expect_error(with_service("  - {name: api, backends: {ams: [\"10.0.0.1:80\"]}}\n"), 8, "services[api].backends.ams",
               "unknown datacenter");
}

TEST(config_loader, unknown_metrics_and_sources_list_the_allowed_ones) {
  expect_error(base + "      - {name: x, type: A, dc: {source: host, metric: healthyBackends, answers: {fra: [192.0.2.1]}}}\n",
               14, "dc.metric", "allowed: cpu, mem, bw, status, packetLoss");
  expect_error(base + "      - {name: x, type: A, dc: {source: disk, metric: cpu, answers: {fra: [192.0.2.1]}}}\n", 14,
               "dc.source", "unknown source 'disk'");
}

TEST(config_loader, criteria_and_gates_are_checked) {
  expect_error(base + "      - {name: x, type: A, dc: {source: host, metric: cpu, criterion: smallest, answers: {fra: "
                      "[192.0.2.1]}}}\n",
               14, "dc.criterion", "unknown criterion 'smallest'");
  expect_error(base + "      - {name: x, type: A, dc: {source: host, metric: cpu, criterion: {within: {target: best, "
                      "margin: lots}}, answers: {fra: [192.0.2.1]}}}\n",
               14, "within.margin", "non-negative number or percentage");
  expect_error(base + "      - {name: x, type: A, dc: {source: host, metric: cpu, gate: {source: host, metric: status, "
                      "criterion: highest}, answers: {fra: [192.0.2.1]}}}\n",
               14, "gate.criterion", "a gate is a test");
}

TEST(config_loader, too_many_answers_and_cname_with_several_answers) {
  std::string many;
  for (int i = 0; i < 70; ++i)
    many += (i ? ", " : "") + std::string("192.0.2.") + std::to_string(i + 1);
  expect_error(base + "      - {name: x, type: A, answers: [" + many + "]}\n", 14, "records[x].answers", "more than 64");
  expect_error(base + "      - {name: x, type: CNAME, answers: [a.example.net., b.example.net.]}\n", 14, "answers",
               "exactly one answer");
}

TEST(config_loader, duplicate_names_and_records) {
  expect_error("datacenters:\n  - {name: fra}\n  - {name: fra}\n" + base.substr(base.find("probes:")), 3,
               "datacenters[fra].name", "duplicate datacenter name");
  expect_error(base + "      - {name: ns1, type: A, answers: [192.0.2.54]}\n", 14, "records", "duplicate record ns1.example.com. A");
}

TEST(config_loader, a_dc_record_on_a_service_warns_of_each_dc_where_the_service_never_has_data) {
  // web has backends in fra only; lbs has lb_stats in iad only; sea has neither.
  std::string yaml = base;
  yaml.insert(yaml.find("zones:"), "  - {name: lbs, lb_stats: {iad: \"haproxy:/run/haproxy/admin.sock\"}}\n");
  yaml.insert(yaml.find("probes:"), "  - {name: sea}\n");
  auto r = load(yaml + "      - {name: w, type: A, dc: {source: service, service: web, metric: healthyBackends, "
                       "answers: {sea: [192.0.2.3], fra: [192.0.2.1], iad: [192.0.2.2]}}}\n"
                       "      - {name: l, type: A, dc: {source: service, service: lbs, metric: healthyBackends, "
                       "answers: {fra: [192.0.2.1], iad: [192.0.2.2]}}}\n"
                       "      - {name: h, type: A, dc: {source: host, metric: status, answers: {sea: [192.0.2.3]}}}\n");
  ASSERT_TRUE(r.ok()) << r.report();
  std::vector<std::string> warnings;
  for (const auto& w : r.warnings)
    warnings.push_back(w.field + ": " + w.message.substr(0, w.message.find(':')));
  EXPECT_EQ(warnings, (std::vector<std::string>{
                        "zones[example.com].records[w].dc.answers.sea: service 'web' has no backends or lb_stats in DC 'sea'",
                        "zones[example.com].records[w].dc.answers.iad: service 'web' has no backends or lb_stats in DC 'iad'",
                        "zones[example.com].records[l].dc.answers.fra: service 'lbs' has no backends or lb_stats in DC 'fra'"}))
    << r.report();
}

TEST(config_loader, every_duplicate_record_is_an_error_and_a_cname_beside_other_types_a_warning) {
  auto r = load(base + // lines 14..
                "      - {name: www, type: A, answers: [192.0.2.1]}\n"
                "      - {name: www, type: AAAA, answers: ['2001:db8::1']}\n"
                "      - {name: zz, type: CNAME, answers: [www.example.com.]}\n"
                "      - {name: mail, type: A, answers: [192.0.2.2]}\n"
                "      - {name: zz, type: TXT, answers: [x]}\n"
                "      - {name: WWW, type: A, answers: [192.0.2.3]}\n" // line 19: www A again
                "      - {name: alias, type: CNAME, answers: [www.example.com.]}\n"
                "      - {name: aa, type: MX, answers: ['10 mail.example.com.']}\n"
                "      - {name: aa, type: CNAME, answers: [www.example.com.]}\n"
                "      - {name: zz, type: CNAME, answers: [mail.example.com.]}\n" // line 23: zz CNAME again
                "      - {name: aa, type: A, answers: [192.0.2.4]}\n");
  std::vector<std::string> errors, warnings;
  for (const auto& e : r.errors)
    errors.push_back(std::to_string(e.line) + " " + e.message);
  for (const auto& w : r.warnings)
    warnings.push_back(w.message.substr(0, w.message.find(' ')));
  EXPECT_EQ(errors, (std::vector<std::string>{"19 duplicate record www.example.com. A",
                                              "23 duplicate record zz.example.com. CNAME"}));
  EXPECT_EQ(warnings, (std::vector<std::string>{"aa.example.com.", "zz.example.com."})) << r.report();
}

TEST(config_loader, a_name_outside_its_zone_is_rejected) {
  expect_error(base + "      - {name: www.example.org., type: A, answers: [192.0.2.1]}\n", 14, "records[www.example.org.].name",
               "outside zone example.com.");
}

TEST(config_loader, latency_table_errors_name_the_csv_file_and_line) {
  std::string csv = ::testing::TempDir() + "bad_latency.csv";
  FILE* f = std::fopen(csv.c_str(), "w");
  ASSERT_TRUE(f);
  std::fputs("prefix,dc,rtt_ms\n198.51.100.0/24,fra,12\n198.51.100.0/24,ams,3\n", f);
  std::fclose(f);
  auto r = load(base + "latency_table: " + csv + "\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].file, csv);
  EXPECT_EQ(r.errors[0].line, 3);
  EXPECT_NE(r.errors[0].message.find("unknown datacenter 'ams'"), std::string::npos);
}

TEST(config_loader, rendered_errors_read_file_line_column_field_message) {
  auto r = load(base + "      - {name: x, type: A, ttl: -1, answers: [192.0.2.1]}\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].to_string(), "cfg.yaml:14:33: zones[example.com].records[x].ttl: value -1 is out of range 0..2147483647");
}

TEST(config_loader, defaults_follow_the_spec) {
  auto r = load(with_service("  - {name: api}\n") + "profiles:\n  - {name: p, method: weighted, endpoints: [{name: a, kind: "
                                              "external, target: 192.0.2.1}]}\n");
  ASSERT_TRUE(r.ok()) << r.report();
  const probe_settings& probe = r.cfg->find_service("api")->probe;
  EXPECT_EQ(probe.protocol, probe_protocol::http);
  EXPECT_EQ(probe.path, "/");
  EXPECT_EQ(probe.interval_ms, 30000);
  EXPECT_EQ(probe.timeout_ms, 30000);
  EXPECT_EQ(probe.unhealthy_threshold, 3);
  ASSERT_EQ(probe.match_status.size(), 1u);
  EXPECT_EQ(probe.match_status[0].first, 200);
  EXPECT_EQ(probe.match_status[0].last, 399);
  const gtmesh::profile* p = r.cfg->find_profile("p");
  EXPECT_EQ(p->endpoints[0].weight, 1u);
  EXPECT_EQ(p->on_all_down, all_down_action::fail_open);
}

// --- totality: any bytes give a model or errors, never an exception ---------
// (tests/fuzz/config_yaml_fuzz.cpp runs the same entry point on random input;
// each case below is a class of input that once escaped as an exception.)

/// Loads `yaml` expecting no exception and a rejection whose every error has
/// a message and, when it comes from the text, a line; returns the errors.
config_errors expect_rejected(const std::string& yaml) {
  load_result r;
  try {
    r = load(yaml);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the loader threw: " << e.what() << "\ninput:\n" << yaml.substr(0, 400);
    return {};
  }
  EXPECT_FALSE(r.ok()) << "accepted:\n" << yaml.substr(0, 400);
  EXPECT_FALSE(r.errors.empty());
  for (const auto& e : r.errors) {
    EXPECT_FALSE(e.message.empty());
    EXPECT_EQ(e.message.find("cannot read this element"), std::string::npos)
      << "the last-resort handler caught it: " << e.to_string();
  }
  return r.errors;
}

/// A DC-mode record (line 14 of base + this) with `dc_body` inside dc: {...}.
std::string dc_record(const std::string& dc_body) {
  return base + "      - {name: x, type: A, dc: {" + dc_body + "}}\n";
}

TEST(config_loader, a_criterion_key_typo_is_an_error_naming_line_and_field) {
  // {equal: up} for {equals: up} threw YAML::InvalidNode out of the loader
  // (gtmesh check-config died with SIGABRT).
  const std::string yaml =
    dc_record("source: host, metric: status, criterion: {equal: up}, answers: {fra: [192.0.2.1]}");
  expect_rejected(yaml);
  expect_error(yaml, 14, "records[x].dc.criterion.equal", "unknown key (allowed: equals, within)");
  auto r = load(yaml);
  ASSERT_EQ(r.errors.size(), 1u) << r.report(); // the typo alone, no follow-on noise
  EXPECT_EQ(r.errors[0].column, 75);
  // The same typo in a gate, and one level further down in within.
  expect_error(dc_record("source: host, metric: cpu, gate: {source: host, metric: status, criterion: {equal: up}}, "
                         "answers: {fra: [192.0.2.1]}"),
               14, "dc.gate.criterion.equal", "unknown key");
  expect_error(dc_record("source: host, metric: cpu, criterion: {within: {target: best, margn: 5}}, "
                         "answers: {fra: [192.0.2.1]}"),
               14, "criterion.within.margn", "unknown key");
}

TEST(config_loader, a_profile_record_with_a_null_profile_is_rejected) {
  // Found by config_yaml_fuzz (`profile: &ool`, an anchored null): the record
  // chose profile mode, named no profile, validated, and compile_plan
  // dereferenced find_profile("") == nullptr.
  for (std::string value : {"", "~", "null", "&a"}) {
    const std::string yaml = base + "      - {name: x, type: A, profile: " + value + "}\n";
    expect_error(yaml, 14, "records[x].profile", "has no value");
  }
}

// One rule for an empty value (`key:`, `key: ~`, `key: null`), whatever the
// key: an error at its line that names it (docs/config.md). Every key of
// configs/full.yaml is emptied in turn, in the whole scope the deciders read
// and, outside the zones, in the agents' scope too.
namespace empty_values {

struct key_place {
  std::string path; ///< "zones[0].records[2].dc.gate" (indices, for messages)
  std::string key;
  int line = 0;     ///< 1-based
  size_t begin = 0; ///< the value's text: [begin, end), after the key's ':'
  size_t end = 0;
  bool in_zones = false;
};

std::vector<size_t> line_starts(const std::string& text) {
  std::vector<size_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      starts.push_back(i + 1);
  return starts;
}

/// The end of the flow collection or quoted scalar starting at `i`.
size_t end_of_flow(const std::string& t, size_t i) {
  if (t[i] == '"' || t[i] == '\'') {
    char q = t[i];
    for (size_t k = i + 1; k < t.size(); ++k) {
      if (q == '"' && t[k] == '\\')
        ++k;
      else if (t[k] == q)
        return k + 1;
    }
    return t.size();
  }
  int depth = 0;
  for (size_t k = i; k < t.size(); ++k) {
    if (t[k] == '"' || t[k] == '\'') {
      k = end_of_flow(t, k) - 1;
    } else if (t[k] == '{' || t[k] == '[') {
      ++depth;
    } else if (t[k] == '}' || t[k] == ']') {
      if (--depth == 0)
        return k + 1;
    }
  }
  return t.size();
}

/// The end of the block value of a key at `key_column` whose line ends at `eol`:
/// the following lines indented deeper (or blank, or comments).
size_t end_of_block(const std::string& t, size_t eol, size_t key_column) {
  size_t end = eol;
  size_t pos = eol + 1;
  while (pos < t.size()) {
    size_t next = t.find('\n', pos);
    if (next == std::string::npos)
      next = t.size();
    size_t indent = t.find_first_not_of(' ', pos);
    bool blank_or_comment = indent >= next || t[indent] == '#';
    bool sequence_at_key = indent - pos == key_column && t.compare(indent, 2, "- ") == 0;
    if (!blank_or_comment && indent - pos <= key_column && !sequence_at_key)
      break;
    if (!blank_or_comment)
      end = next;
    pos = next + 1;
  }
  return end;
}

void collect(const yaml::node& n, const std::string& path, const std::string& text,
             const std::vector<size_t>& starts, bool in_zones, std::vector<key_place>& out) {
  if (n.is_sequence()) {
    for (size_t i = 0; i < n.size(); ++i)
      collect(n[i], path + "[" + std::to_string(i) + "]", text, starts, in_zones, out);
    return;
  }
  if (!n.is_map())
    return;
  for (size_t i = 0; i < n.size(); ++i) {
    yaml::node k = n.key_at(i), v = n.value_at(i);
    key_place p;
    p.key = k.text();
    p.path = path.empty() ? p.key : path + "." + p.key;
    p.in_zones = in_zones || (path.empty() && p.key == "zones");
    yaml::mark km = k.position(), vm = v.position();
    p.line = km.line + 1;
    size_t key_at = starts[km.line] + km.column;
    p.begin = text.find(':', key_at + p.key.size()) + 1;
    size_t value_at = starts[vm.line] + vm.column;
    char c = text[value_at];
    size_t eol = text.find('\n', p.begin);
    if (vm.line > km.line || (v.is_sequence() && c == '-'))
      p.end = end_of_block(text, eol == std::string::npos ? text.size() : eol, km.column);
    else if (c == '{' || c == '[' || c == '"' || c == '\'')
      p.end = end_of_flow(text, value_at);
    else
      p.end = value_at + v.scalar().size();
    out.push_back(p);
    collect(v, p.path, text, starts, p.in_zones, out);
  }
}

} // namespace empty_values

TEST(config_loader, an_empty_value_of_any_key_is_an_error_naming_it) {
  using namespace empty_values;
  const std::string file = source_dir() + "/configs/full.yaml";
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(load_config_text(text, file, routing_methods()).ok());
  auto parsed = yaml::parse(text);
  ASSERT_TRUE(parsed.doc);
  std::vector<key_place> keys;
  collect(parsed.doc->root(), "", text, line_starts(text), false, keys);
  ASSERT_GT(keys.size(), 80u); // every key of the file, nested ones included
  int checked = 0;
  for (const key_place& k : keys) {
    for (std::string empty : {" ", " ~", " null"}) {
      std::string emptied = text.substr(0, k.begin) + empty + text.substr(k.end);
      for (config_scope scope : {config_scope::whole, config_scope::measurement}) {
        if (scope == config_scope::measurement && k.in_zones)
          continue; // the agents do not read the zones
        auto r = load_config_text(emptied, file, routing_methods(), scope);
        ++checked;
        bool named = false;
        for (const auto& e : r.errors)
          named = named || (e.line == k.line && e.message.find("has no value") != std::string::npos &&
                            (e.field == k.key || e.field.ends_with("." + k.key)));
        EXPECT_TRUE(named) << k.path << " at line " << k.line << " emptied as '" << empty << "' ("
                           << (scope == config_scope::whole ? "whole" : "measurement") << " scope):\n"
                           << r.report() << "\n--- text ---\n"
                           << emptied.substr(line_starts(emptied)[k.line - 1], 200);
      }
    }
  }
  EXPECT_GT(checked, 400);
}

TEST(config_loader, malformed_shapes_are_errors_not_exceptions) {
  // Sequence or scalar where a mapping is expected.
  expect_error("cluster: [a, b]\n" + base, 1, "cluster", "expected a mapping");
  expect_error("measurement: often\n" + base, 1, "measurement", "expected a mapping");
  expect_error(base + "      - just-a-scalar\n", 14, "records[1]", "expected a mapping");
  expect_error(base + "      - {name: x, type: A, dc: [fra]}\n", 14, "records[x].dc", "expected a mapping");
  expect_error(dc_record("source: host, metric: cpu, criterion: {within: 5}, answers: {fra: [192.0.2.1]}"), 14,
               "criterion.within", "expected a mapping");
  expect_error(dc_record("source: host, metric: cpu, criterion: [lowest], answers: {fra: [192.0.2.1]}"), 14,
               "criterion", "expected a mapping");
  expect_error(dc_record("source: host, metric: cpu, criterion: {within: {margin: 5}}, answers: {fra: [192.0.2.1]}"),
               14, "criterion.within.target", "required");
  expect_error(dc_record("source: host, metric: cpu, criterion: {}, answers: {fra: [192.0.2.1]}"), 14, "criterion",
               "exactly one of");
  expect_error(dc_record("source: host, metric: cpu, answers: [192.0.2.1]"), 14, "dc.answers", "expected a mapping");
  expect_error(dc_record("source: host, metric: cpu, answers: {fra: {address: [192.0.2.1]}}"), 14,
               "answers.fra.address", "expected a string");
  expect_error(dc_record("source: [host], metric: cpu, answers: {fra: [192.0.2.1]}"), 14, "dc.source",
               "expected a string");
  expect_error(base + "      - {name: x, type: A, static: {rules: {dc: fra}, answers: {fra: [192.0.2.1]}}}\n", 14,
               "static.rules", "expected a list");
  expect_error(with_service("  - {name: api, probe: [mon]}\n"), 8, "services[api].probe", "expected a mapping");
  expect_error(with_service("  - {name: api, probe: {match: 200}}\n"), 8, "probe.match", "expected a mapping");
  expect_error(with_service("  - {name: api, processes: {fra: [[nginx]]}}\n"), 8, "processes.fra[0]",
               "expected a process name");
  expect_error(with_service("  - {name: api, backends: {[fra]: [\"10.0.0.1:80\"]}}\n"), 8, "services[api].backends",
               "expected a datacenter name");
  expect_error(dc_record("source: host, metric: cpu, answers: {[fra]: [192.0.2.1]}"), 14, "dc.answers",
               "expected a datacenter name");
  expect_error(base + "geo: {database: [a.mmdb]}\n", 14, "geo.database", "expected a string");
  expect_error(base + "latency_table: {file: x}\n", 14, "latency_table", "expected a path");
  expect_error("- a\n- b\n", 1, "", "expected a mapping");
  expect_error("just text\n", 1, "", "expected a mapping");
  // Every one of them also passes the generic checks.
  for (const std::string& yaml :
       {"cluster: [a, b]\n" + base, base + "      - just-a-scalar\n", std::string("- a\n"),
        dc_record("source: host, metric: cpu, criterion: {within: 5}, answers: {fra: [192.0.2.1]}")})
    expect_rejected(yaml);
}

TEST(config_loader, wrong_scalar_types_and_huge_numbers) {
  expect_error(base + "      - {name: x, type: A, ttl: [1], answers: [192.0.2.1]}\n", 14, "records[x].ttl",
               "expected an integer");
  expect_error(base + "      - {name: x, type: A, ttl: {a: 1}, answers: [192.0.2.1]}\n", 14, "records[x].ttl",
               "expected an integer");
  expect_error(base + "      - {name: x, type: A, ttl: 99999999999999999999999, answers: [192.0.2.1]}\n", 14,
               "records[x].ttl", "out of range 0..2147483647");
  expect_error(base + "      - {name: x, type: A, ttl: -99999999999999999999999, answers: [192.0.2.1]}\n", 14,
               "records[x].ttl", "out of range");
  // Numbers beyond double's range, and nan/inf, are not numbers.
  expect_error("datacenters:\n  - {name: fra, location: {lat: 1e999, lon: 0}}\n" + base.substr(base.find("probes:")),
               2, "location.lat", "expected a number");
  expect_error("datacenters:\n  - {name: fra, location: {lat: nan, lon: 0}}\n" + base.substr(base.find("probes:")),
               2, "location.lat", "expected a number");
  expect_error("datacenters:\n  - {name: fra, location: {lat: 0, lon: -inf}}\n" + base.substr(base.find("probes:")),
               2, "location.lon", "expected a number");
  // An answer's location is held to the same ranges as a datacenter's.
  expect_error(base + "      - {name: x, type: A, answers: [{address: 192.0.2.1, location: {lat: 91, lon: 0}}]}\n", 14,
               "records[x].answers[0].location.lat", "latitude must be within -90..90");
  expect_error(base + "      - {name: x, type: A, answers: [{address: 192.0.2.1, location: {lat: 0, lon: -180.5}}]}\n",
               14, "records[x].answers[0].location.lon", "longitude must be within -180..180");
  expect_error("datacenters:\n  - {name: fra, location: {lat: -90.01, lon: 0}}\n" + base.substr(base.find("probes:")),
               2, "location.lat", "latitude must be within -90..90");
  EXPECT_TRUE(load(base + "      - {name: x, type: A, answers: [{address: 192.0.2.1, location: {lat: -90, lon: 180}}]}\n")
                .ok());
  expect_error(dc_record("source: host, metric: cpu, criterion: {within: {target: best, margin: nan%}}, "
                         "answers: {fra: [192.0.2.1]}"),
               14, "within.margin", "non-negative number");
  // A duration of 10^300 seconds would overflow the int64 of milliseconds.
  expect_error(with_service("  - {name: api, interval: 1e300s}\n"), 8, "services[api].interval", "expected a duration");
  expect_error(with_service("  - {name: api, interval: nan}\n"), 8, "services[api].interval", "expected a duration");
}

TEST(config_loader, duplicate_keys_in_every_kind_of_mapping_are_rejected) {
  expect_error(with_service("  - {name: api, backends: {fra: [\"10.0.0.1:80\"], fra: [\"10.0.0.2:80\"]}}\n"), 8,
               "backends.fra", "duplicate key");
  expect_error(dc_record("source: host, metric: cpu, answers: {fra: [192.0.2.1], fra: [192.0.2.2]}"), 14,
               "answers.fra", "duplicate key");
  expect_error(base + "zones: []\n", 14, "zones", "duplicate key");
}

TEST(config_loader, invalid_utf8_and_control_bytes_are_errors_or_accepted_never_thrown) {
  for (std::string bad : {std::string("\xff\xfe"), std::string("a\xc3"), std::string("\xed\xa0\x80"),
                          std::string("x\0y", 3)}) {
    load_result r;
    EXPECT_NO_THROW(r = load(base + "      - {name: \"" + bad + "\", type: A, answers: [192.0.2.1]}\n"));
    EXPECT_NO_THROW(r = load(bad + ": 1\n" + base));
    EXPECT_FALSE(r.ok());
    EXPECT_NO_THROW(r = load(base + bad));
  }
}

TEST(config_loader, deep_nesting_is_a_syntax_error_not_a_stack_overflow) {
  // yaml-cpp stops at 2000 levels; a stack overflow would kill the test.
  for (const std::string& open : {std::string("["), std::string("{a: "), std::string("- ")}) {
    std::string yaml;
    for (int i = 0; i < 100'000; ++i)
      yaml += open;
    auto errors = expect_rejected(yaml);
    ASSERT_FALSE(errors.empty());
    EXPECT_NE(errors[0].message.find("YAML syntax"), std::string::npos) << errors[0].to_string();
  }
}

TEST(config_loader, anchors_and_self_referencing_aliases_terminate) {
  // yaml-cpp registers an anchor before its children, so *z inside &z
  // builds a sequence that contains itself.
  expect_rejected("zones: &z [*z]\n" + base.substr(0, base.find("zones:")));
  expect_rejected("datacenters: &d [{name: fra, access_points: {wan: *d}}]\n" + base.substr(base.find("probes:")));
  // Here an anchor is known once its node is complete: `&a [*a]` names an
  // anchor that does not exist yet.
  expect_error("x: &a [*a]\n" + base, 1, "", "unknown anchor *a");
  expect_error(base + "      - &r {name: x, type: A, answers: [192.0.2.1]}\n      - *r\n", 14, "records",
               "duplicate record");
  expect_rejected(base + "      - {name: y, type: A, answers: *undefined}\n");
}

std::string nested_chain(int levels) {
  std::string yaml = base + "profiles:\n";
  for (int i = 1; i <= levels; ++i) {
    yaml += "  - {name: p" + std::to_string(i) + ", method: priority, endpoints: [";
    if (i < levels)
      yaml += "{name: n, kind: nested, profile: p" + std::to_string(i + 1) + ", priority: 1}, ";
    yaml += "{name: e, kind: external, target: 192.0.2.1, priority: 2}]}\n";
  }
  return yaml;
}

TEST(config_loader, nested_profiles_are_limited_to_ten_levels) {
  auto ten = load(nested_chain(static_cast<int>(max_profile_nesting)));
  EXPECT_TRUE(ten.ok()) << ten.report();
  expect_error(nested_chain(static_cast<int>(max_profile_nesting) + 1), 15, "profiles[p1]",
               "more than 10 levels deep: p1 -> p2 -> p3");
  // A long chain is one error, found without walking the whole chain.
  auto errors = expect_rejected(nested_chain(500));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("levels deep"), std::string::npos);
}

// A zone of many records mixing every answer form: shared and distinct
// values, own locations, DC-mode, static and profile records; `bad` adds
// errors in both halves.
std::string many_records(int n, bool bad) {
  std::string y = R"(datacenters:
  - {name: fra, location: {lat: 50.1, lon: 8.7}}
  - {name: iad}
services:
  - {name: web, backends: {fra: ["10.0.0.1:80"], iad: ["10.0.0.2:80"]}}
profiles:
  - {name: p, method: weighted, endpoints: [{name: e, kind: external, target: 192.0.2.4}]}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
)";
  for (int i = 0; i < n; ++i) {
    std::string name = "r" + std::to_string(i);
    std::string shared = "192.0.2." + std::to_string(i % 7);
    std::string own = "10." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ".1";
    switch (i % 5) {
      case 0:
        y += "      - {name: " + name + ", type: A, answers: [" + shared + ", " + own + "]}\n";
        break;
      case 1:
        y += "      - {name: " + name + ", type: A, dc: {source: service, service: web, metric: healthyBackends, " +
             "balance: closest, answers: {iad: [{address: " + own + ", weight: 3, location: {lat: 1, lon: " +
             std::to_string(i % 180) + "}}], fra: [" + shared + "]}, fail_safe: [" + shared + "]}}\n";
        break;
      case 2:
        y += "      - {name: " + name + ", type: A, static: {rules: [{subnet: 10.0.0.0/8, dc: fra}, {dc: iad}], " +
             "answers: {fra: [" + own + "], iad: [" + shared + "]}}}\n";
        break;
      case 3:
        y += "      - {name: " + name + ", type: A, profile: p}\n";
        break;
      default:
        y += "      - {name: " + name + ", type: TXT, answers: [\"t" + std::to_string(i % 3) + "\"]}\n";
    }
    if (bad && (i == 3 || i == n - 4))
      y += "      - {name: x" + name + ", type: A, dc: {source: host, metric: cpu, answers: {nowhere: [192.0.2.1]}}}\n";
    if (bad && (i == 5 || i == n - 2))
      y += "      - {name: y" + name + ", type: A, answers: [not-an-address]}\n";
  }
  return y;
}

/// `yaml` loaded with zones of `threshold` records or more read by two
/// threads (SIZE_MAX: always one), which give the nodes of the records they
/// made back to the system after each one (yaml::release_nodes): a node read after
/// its release reads as undefined, so the model would differ from one
/// thread's, which releases none.
load_result load_reading_records_in_two_from(size_t threshold, const std::string& yaml) {
  struct restore {
    size_t before, every;
    ~restore() {
      config_loading::parallel_records_min = before;
      config_loading::release_nodes_every = every;
    }
  } r{config_loading::parallel_records_min.exchange(threshold), config_loading::release_nodes_every.exchange(1)};
  return load(yaml);
}

TEST(config_loader, records_that_rank_dcs_alike_share_one_ranking_and_the_others_keep_their_own) {
  const std::string yaml =
    base +
    "      - {name: a, type: A, dc: {source: host, metric: cpu, answers: {fra: [192.0.2.1]}}}\n"
    "      - {name: b, type: A, dc: {source: host, metric: cpu, answers: {iad: [192.0.2.2]}, balance: random}}\n"
    "      - {name: c, type: A, dc: {source: host, metric: cpu, hold_down: 1m, answers: {fra: [192.0.2.1]}}}\n"
    "      - {name: d, type: A, dc: {source: host, metric: cpu, answers: {fra: [192.0.2.1]},\n"
    "                                gate: {source: host, metric: status, criterion: {equals: up}}}}\n"
    "      - {name: e, type: A, dc: {source: host, metric: cpu, answers: {fra: [192.0.2.1]}, protect: true}}\n"
    "      - {name: f, type: A, dc: {source: host, metric: cpu, pick_dc_count: 2, answers: {fra: [192.0.2.1]}}}\n"
    "      - {name: g, type: A, dc: {source: host, metric: cpu, answers: {fra: [192.0.2.9]}}}\n";
  auto r = load(yaml);
  ASSERT_TRUE(r.ok()) << r.report();
  const auto& recs = r.cfg->zones[0].records;
  ASSERT_EQ(recs.size(), 8u);
  auto ranking = [&](size_t i) { return recs[i].dc->ranking.get(); };
  EXPECT_EQ(ranking(1), ranking(2)) << "other answers and balance: the same ranking";
  EXPECT_EQ(ranking(1), ranking(7));
  for (size_t i : {3, 4, 5, 6})
    for (size_t j = 1; j < 8; ++j)
      if (j != i)
        EXPECT_NE(ranking(i), ranking(j)) << recs[i].name << " and " << recs[j].name;
  EXPECT_EQ(ranking(3)->damping.hold_ms, 60'000);
  EXPECT_EQ(ranking(4)->gates.size(), 1u);
  EXPECT_TRUE(ranking(5)->protect.enabled);
  EXPECT_EQ(ranking(6)->pick_dc_count, 2);
  EXPECT_EQ(recs[2].dc->balance, balance_kind::random) << "the balance stays the record's own";
  EXPECT_EQ(ranking(1)->rank.kind, criterion_kind::lowest) << "cpu: lower is better";
}

TEST(config_loader, every_kind_of_answer_value_reads_back_from_the_pool_as_written) {
  const std::string yaml = base +
                           "      - {name: v6, type: AAAA, answers: [\"2001:db8::1\", \"::ffff:192.0.2.7\"]}\n"
                           "      - {name: v4, type: A, answers: [0.0.0.0, 255.255.255.255]}\n"
                           "      - {name: mx, type: MX, answers: [{preference: 10, exchange: mail.example.net.}]}\n"
                           "      - {name: srv, type: SRV, answers: [{priority: 1, srv_weight: 2, port: 443, target: t.example.net.}]}\n"
                           "      - {name: txt, type: TXT, answers: [{text: [\"a b\", \"c\"]}, \"d\"]}\n"
                           "      - {name: cn, type: CNAME, answers: [other.example.net.]}\n";
  auto r = load(yaml);
  ASSERT_TRUE(r.ok()) << r.report();
  const config& c = *r.cfg;
  std::vector<std::string> got;
  for (const auto& rec : c.zones[0].records)
    for (const auto& item : c.answers_of(rec.plain))
      got.push_back(rec.name + " " + c.value_of(item).text());
  EXPECT_EQ(got, (std::vector<std::string>{
                   "ns1.example.com. 192.0.2.53", "v6.example.com. 2001:db8::1", "v6.example.com. ::ffff:192.0.2.7",
                   "v4.example.com. 0.0.0.0", "v4.example.com. 255.255.255.255",
                   "mx.example.com. 10 mail.example.net.", "srv.example.com. 1 2 443 t.example.net.",
                   "txt.example.com. \"a b\" \"c\"", "txt.example.com. \"d\"", "cn.example.com. other.example.net."}));
  // Equal and unequal values, as the loader interns them.
  const answer_value v6 = c.value_of(c.answers_of(c.zones[0].records[1].plain)[0]);
  const uint32_t at = c.answers_of(c.zones[0].records[1].plain)[0].value;
  EXPECT_TRUE(c.answer_values.equals(at, v6));
  answer_value other = v6;
  other.address = *ip_address::parse("2001:db8::2");
  EXPECT_FALSE(c.answer_values.equals(at, other));
  EXPECT_EQ(c.answer_values.address(at), v6.address);
  EXPECT_FALSE(v6.address.v4());
  EXPECT_TRUE(c.value_of(c.answers_of(c.zones[0].records[2].plain)[0]).address.v4());
}

TEST(config_loader, records_read_by_two_threads_give_the_model_one_thread_gives) {
  if (std::thread::hardware_concurrency() < 2)
    GTEST_SKIP() << "one core: the loader reads on one thread, there is nothing to compare";
  const std::string yaml = many_records(400, false);
  const load_result one = load_reading_records_in_two_from(SIZE_MAX, yaml);
  const load_result two = load_reading_records_in_two_from(16, yaml);
  ASSERT_TRUE(one.ok()) << one.report();
  ASSERT_TRUE(two.ok()) << two.report();
  const config& a = *one.cfg;
  const config& b = *two.cfg;
  ASSERT_EQ(a.answer_values.size(), b.answer_values.size());
  EXPECT_LT(a.answer_values.size(), a.answers.size()) << "shared values are stored once";
  for (size_t i = 0; i < a.answer_values.size(); ++i)
    EXPECT_EQ(a.answer_values[i], b.answer_values[i]) << i;
  ASSERT_EQ(a.answers.size(), b.answers.size());
  for (size_t i = 0; i < a.answers.size(); ++i) {
    EXPECT_EQ(a.answers[i].value, b.answers[i].value) << i;
    EXPECT_EQ(a.answers[i].weight, b.answers[i].weight) << i;
    auto la = a.location_of(a.answers[i]), lb = b.location_of(b.answers[i]);
    ASSERT_EQ(la.has_value(), lb.has_value()) << i;
    if (la)
      EXPECT_EQ(la->lon, lb->lon) << i;
  }
  const auto& ra = a.zones[0].records;
  const auto& rb = b.zones[0].records;
  ASSERT_EQ(ra.size(), 400u);
  ASSERT_EQ(ra.size(), rb.size());
  auto texts = [](const config& c, const record& r) {
    std::vector<std::string> out;
    auto add = [&](const std::string& tag, answer_span s) {
      for (const auto& item : c.answers_of(s))
        out.push_back(tag + " " + c.value_of(item).text() + " w" + std::to_string(item.weight));
    };
    add("plain", r.plain);
    if (r.dc) {
      for (const auto& d : r.dc->answers)
        add("dc " + c.datacenters[d.dc].name, d.answers);
      add("fail_safe", r.dc->fail_safe);
    }
    if (r.static_rules)
      for (const auto& d : r.static_rules->answers)
        add("static " + c.datacenters[d.dc].name, d.answers);
    return out;
  };
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].name, rb[i].name);
    EXPECT_EQ(ra[i].where.line, rb[i].where.line);
    EXPECT_EQ(texts(a, ra[i]), texts(b, rb[i])) << ra[i].name;
  }
  EXPECT_EQ(texts(b, rb[1]), (std::vector<std::string>{"dc iad 10.0.1.1 w3", "dc fra 192.0.2.1 w1",
                                                       "fail_safe 192.0.2.1 w1"}));
  EXPECT_EQ(texts(b, rb[395]), (std::vector<std::string>{"plain 192.0.2.3 w1", "plain 10.1.145.1 w1"}))
      << "a record of the second half points into the merged arena";
  EXPECT_TRUE(compile_plan(two.cfg).plan);
}

TEST(config_loader, records_that_alias_an_earlier_records_nodes_read_them_with_two_threads) {
  // `*t` and `*a` are the nodes of record 150, made long before: a document
  // with aliases keeps its nodes (yaml::release_nodes), else a later
  // record would read its TTL as the default and its answers as missing.
  if (std::thread::hardware_concurrency() < 2)
    GTEST_SKIP() << "one core: the loader reads on one thread, there is nothing to compare";
  std::string yaml = many_records(0, false);
  for (int i = 0; i < 400; ++i)
    yaml += i == 150 ? "      - {name: r150, type: A, ttl: &t 77, answers: &a [192.0.2.7, 192.0.2.8]}\n"
          : i > 150 && i % 3 == 0 ? "      - {name: r" + std::to_string(i) + ", type: A, ttl: *t, answers: *a}\n"
                                : "      - {name: r" + std::to_string(i) + ", type: A, answers: [10.0.0." +
                                    std::to_string(i % 250) + "]}\n";
  const load_result one = load_reading_records_in_two_from(SIZE_MAX, yaml);
  const load_result two = load_reading_records_in_two_from(16, yaml);
  ASSERT_TRUE(one.ok()) << one.report();
  ASSERT_TRUE(two.ok()) << two.report();
  const auto& ra = one.cfg->zones[0].records;
  const auto& rb = two.cfg->zones[0].records;
  ASSERT_EQ(ra.size(), 400u);
  ASSERT_EQ(rb.size(), 400u);
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].ttl, rb[i].ttl) << ra[i].name;
    std::vector<std::string> a, b;
    for (const auto& item : one.cfg->answers_of(ra[i].plain))
      a.push_back(one.cfg->value_of(item).text());
    for (const auto& item : two.cfg->answers_of(rb[i].plain))
      b.push_back(two.cfg->value_of(item).text());
    EXPECT_EQ(a, b) << ra[i].name;
  }
  EXPECT_EQ(rb[399].ttl, 77u) << "the last record, made by the second thread, reads record 150's TTL";
  EXPECT_EQ(rb[153].ttl, 77u);
}

TEST(config_loader, records_read_by_two_threads_report_errors_of_both_halves_in_order) {
  if (std::thread::hardware_concurrency() < 2)
    GTEST_SKIP() << "one core: the loader reads on one thread, there is nothing to compare";
  const std::string yaml = many_records(400, true);
  const load_result one = load_reading_records_in_two_from(SIZE_MAX, yaml);
  const load_result two = load_reading_records_in_two_from(16, yaml);
  ASSERT_FALSE(two.ok());
  ASSERT_EQ(two.errors.size(), 6u) << two.report(); // a bad answer also leaves its record without one
  EXPECT_EQ(one.report(), two.report());
  EXPECT_NE(two.errors[0].field.find("records[xr3]"), std::string::npos) << two.report();
  EXPECT_NE(two.errors[3].field.find("records[xr396]"), std::string::npos) << two.report();
  EXPECT_NE(two.errors[5].field.find("records[yr398]"), std::string::npos) << two.report();
}

TEST(config_loader, oversized_input_and_endless_files_are_refused) {
  std::string big = base + "# " + std::string(max_config_bytes, 'x') + "\n";
  auto errors = expect_rejected(big);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("the limit is"), std::string::npos);
  // /dev/zero exists and opens, but has no end.
  expect_error(base + "latency_table: /dev/zero\n", 14, "latency_table", "not a regular file");
  auto r = load_config_file("/dev/zero", routing_methods());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("the limit is"), std::string::npos) << r.report();
}

TEST(config_loader, check_config_names_the_typo_and_exits_1_not_134) {
  // System level: the real binary, as an operator runs it.
  const std::string bin = test::gtmesh_bin();
  ASSERT_TRUE(std::filesystem::exists(bin)) << bin << " is not built";
  const std::string file = source_dir() + "/tests/core/config/data/criterion_typo.yaml";
  const std::string out = testing::TempDir() + "check_config_typo.txt";
  int status = std::system((bin + " check-config " + file + " > " + out + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << "134 is SIGABRT: an exception escaped";
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(file + ":18:23: zones[example.com].records[www].dc.criterion.equal: unknown key"),
            std::string::npos)
    << text;
}

} // namespace
} // namespace gtmesh

namespace gtmesh {
namespace {

TEST(config_loader, soa_admin_in_mail_form_keeps_the_local_part_in_one_label) {
  // RFC 1035 8: the mailbox's domain is complete (not relative to the zone),
  // and a dot in the local part is escaped inside the first label.
  auto admin_of = [](const std::string& admin) {
    std::string yaml = base;
    yaml.replace(yaml.find("admin: hostmaster"), 17, "admin: \"" + admin + "\"");
    auto r = load(yaml);
    EXPECT_TRUE(r.ok()) << r.report();
    return r.ok() ? r.cfg->zones[0].soa.admin : std::string();
  };
  EXPECT_EQ(admin_of("hostmaster@example.com"), "hostmaster.example.com.");
  EXPECT_EQ(admin_of("dns.admin@example.org"), "dns\\.admin.example.org.");
  EXPECT_EQ(admin_of("hostmaster"), "hostmaster.example.com.");
  EXPECT_EQ(admin_of("hostmaster.example.net."), "hostmaster.example.net.");
  auto wire = dns::text_to_wire(admin_of("dns.admin@example.org"));
  ASSERT_TRUE(wire);
  EXPECT_EQ(wire->at(0), 9u); // "dns.admin": one label
  EXPECT_EQ(dns::wire_to_text(*wire), "dns\\.admin.example.org.");
}

} // namespace
} // namespace gtmesh

namespace gtmesh {
namespace {

TEST(config_loader, an_asterisk_is_a_wildcard_only_as_the_whole_leftmost_label) {
  // RFC 4592 2.1.1: `*.rest` is a wildcard; "a*.x" or "x.*.y" would be
  // literal names (2.1.2), which in a config is surely a typo.
  const std::string msg = "wildcard only as the whole leftmost label";
  expect_error(base + "      - {name: \"a*.x\", type: A, answers: [192.0.2.1]}\n", 14, "records[a*.x].name", msg);
  expect_error(base + "      - {name: \"*a\", type: A, answers: [192.0.2.1]}\n", 14, "records[*a].name", msg);
  expect_error(base + "      - {name: \"x.*.y\", type: A, answers: [192.0.2.1]}\n", 14, "records[x.*.y].name", msg);
  expect_error(base + "      - {name: \"*.*\", type: A, answers: [192.0.2.1]}\n", 14, "records[*.*].name", msg);
  expect_error(base + "      - {name: \"x.*.example.com.\", type: A, answers: [192.0.2.1]}\n", 14,
               "records[x.*.example.com.].name", msg);
  // An escaped asterisk is the same octet on the wire.
  expect_error(base + "      - {name: \"x.\\\\042.y\", type: A, answers: [192.0.2.1]}\n", 14, "name", msg);
  // A zone apex is never a wildcard.
  std::string zone = base;
  zone.replace(zone.find("name: example.com"), 17, "name: \"*.example.com\"");
  expect_error(zone, 9, "zones", "apex cannot be a wildcard");
}

TEST(config_loader, wildcard_records_are_accepted_in_every_mode) {
  auto r = load(base + R"(      - {name: "*", type: A, answers: [192.0.2.1]}
      - {name: "*.tenants", type: MX, answers: ["10 mx.example.com."]}
      - {name: "*.abs.example.com.", type: CNAME, answers: ["*.example.com."]}
      - {name: "*.dc", type: A, dc: {source: host, metric: status, criterion: {equals: up}, answers: {fra: [192.0.2.2]}}}
      - {name: "*.st", type: A, static: {rules: [{dc: fra}], answers: {fra: [192.0.2.3]}}}
      - {name: "*.pr", type: A, profile: p}
      - {name: "*.abcdefghijklmnopqrstuvwxyz0123456789abcdef", type: A, answers: [192.0.2.5]}
profiles:
  - {name: p, method: priority, endpoints: [{name: e, kind: external, target: 192.0.2.4}]}
)");
  ASSERT_TRUE(r.ok()) << r.report();
  const auto& records = r.cfg->zones[0].records;
  ASSERT_EQ(records.size(), 8u); // the last has a label of 42 octets: its length byte is '*'
  EXPECT_EQ(records[1].name, "*.example.com.");
  EXPECT_EQ(records[2].name, "*.tenants.example.com.");
  EXPECT_EQ(records[3].name, "*.abs.example.com.");
  ASSERT_EQ(records[3].plain.size(), 1u);
  EXPECT_EQ(r.cfg->value_of(r.cfg->answers_of(records[3].plain)[0]).target, "*.example.com.") << "a CNAME target may name a wildcard literally";
  EXPECT_TRUE(compile_plan(r.cfg).plan);
}

} // namespace
} // namespace gtmesh

namespace gtmesh {
TEST(config_loader, probe_headers_are_read_and_bad_ones_named) {
  const std::string base = "zones: [{name: example.com, soa: {primary: ns1, admin: h}, ns: [ns1]}]\n"
                           "datacenters: [{name: fra}]\nservices:\n  - name: web\n    backends: {fra: [\"10.0.0.1:80\"]}\n"
                           "    probe:\n      path: /h\n      headers:\n";
  auto ok = load_config_text(base + "        X-Key: abc\n        Accept: text/plain\n", "h.yaml", routing_methods());
  ASSERT_TRUE(ok.ok()) << ok.report();
  ASSERT_EQ(ok.cfg->services[0].probe.headers.size(), 2u);
  EXPECT_EQ(ok.cfg->services[0].probe.headers[0], (std::pair<std::string, std::string>{"X-Key", "abc"}));
  for (const char* bad : {"        Host: x\n", "        \"Bad Name\": x\n", "        X-List: [a, b]\n",
                          "        Content-Length: 5\n"}) {
    auto r = load_config_text(base + bad, "h.yaml", routing_methods());
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.report().find("h.yaml:9:"), std::string::npos) << r.report();
  }
  auto crlf = load_config_text(base + "        X-Key: \"a\\r\\nInjected: 1\"\n", "h.yaml", routing_methods());
  EXPECT_FALSE(crlf.ok());
  EXPECT_NE(crlf.report().find("one line"), std::string::npos) << crlf.report();
}

} // namespace gtmesh
