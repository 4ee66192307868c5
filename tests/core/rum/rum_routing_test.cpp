// Steering by real users' measurements (docs/rum.md, docs/routing.md): the
// performance method with source: rum and DC mode's rum_latency /
// rum_availability, through the real engine with a published RUM table.

#include "core/rum/rum_table.hpp"
#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

struct cell {
  rum::key_level level;
  std::string key; ///< an address (prefix level), a code (country, continent) or "64500 FR" (asn_country)
  std::string job;
  float p50, availability, samples;
};

class rum_routing : public routing_fixture {
protected:
  rum::rum_table_ptr table;

  void cells(const std::vector<cell>& in) {
    std::vector<rum::rum_table::item> items;
    const uint32_t now_s = static_cast<uint32_t>(now / 1000);
    for (const auto& c : in) {
      uint64_t key = c.level == rum::key_level::prefix || c.level == rum::key_level::resolver
                       ? rum::network_key(*ip_address::parse(c.key), rum::truncation{})
                     : c.level == rum::key_level::asn_country
                       ? rum::asn_country_key(static_cast<uint32_t>(std::stoul(c.key)),
                                              c.key.size() > 6 ? rum::code16(c.key.c_str() + c.key.size() - 2) : 0)
                       : rum::code16(c.key.c_str());
      rum::rum_entry e;
      e.target = rum::target_hash(c.job);
      e.p50_ms = c.p50;
      e.p90_ms = c.p50 * 1.5f;
      e.availability = c.availability;
      e.samples = c.samples;
      e.last_s = now_s - 5;
      e.expires_s = now_s + 3600;
      items.push_back({c.level, key, e});
    }
    table = rum::rum_table::build(items, rum::truncation{}, static_cast<uint32_t>(now / 1000), {});
  }

  answer_set ask_rum(const std::string& name, const std::string& client, const std::string& ecs = "",
                     decision_trace* trace = nullptr) {
    snapshot_ptr snap = make_snapshot(plan, view, now, 1, nullptr, nullptr, nullptr, table);
    auto wire = dns::text_to_wire(name);
    client_info ci = ecs.empty() ? client_info::from_source(*ip_address::parse(client))
                                 : client_info::from_ecs(ip_prefix::parse(ecs)->address,
                                                         static_cast<uint8_t>(ip_prefix::parse(ecs)->length));
    routing_query q{*wire, 1, ci};
    answer_set out;
    resolve(*snap, q, ctx, out, trace);
    return out;
  }
  strings rum_answers(const std::string& name, const std::string& client, const std::string& ecs = "") {
    return answers(ask_rum(name, client, ecs));
  }
  std::string rum_explain(const std::string& name, const std::string& client, const std::string& ecs = "") {
    decision_trace t;
    ask_rum(name, client, ecs, &t);
    return t.to_text();
  }

  void load_performance(const std::string& steps = "") {
    load("      - {name: www, type: A, ttl: 30, profile: web}\n"
         "      - name: api\n"
         "        type: A\n"
         "        dc: {source: client, metric: rum_latency, criterion: lowest, rum: {min_samples: 3},\n"
         "             answers: {a: [192.0.2.101], b: [192.0.2.102], c: [192.0.2.103]}, fail_safe: [192.0.2.199],\n"
         "             on_all_down: fail_safe}\n",
         R"(
profiles:
  - name: web
    method: performance
    source: rum
)" + steps + R"(
    endpoints:
      - {name: eu, kind: external, target: 10.9.0.1, location: a}
      - {name: us, kind: external, target: 10.9.0.2, location: b}
      - {name: ap, kind: external, target: 10.9.0.3, location: c}
)");
  }
};

TEST_F(rum_routing, the_fastest_endpoint_for_the_clients_network_answers) {
  load_performance();
  cells({{rum::key_level::prefix, "198.18.5.0", "web/eu", 80, 1, 20},
         {rum::key_level::prefix, "198.18.5.0", "web/us", 20, 1, 20},
         {rum::key_level::prefix, "198.18.5.0", "web/ap", 150, 1, 20},
         {rum::key_level::prefix, "198.18.6.0", "web/ap", 10, 1, 20}});
  EXPECT_EQ(rum_answers("www.example.com", "198.18.5.77"), strings{"10.9.0.2"});
  EXPECT_EQ(rum_answers("www.example.com", "192.0.2.1", "198.18.6.0/24"), strings{"10.9.0.3"});
  auto a = ask_rum("www.example.com", "192.0.2.1", "198.18.6.0/24");
  EXPECT_EQ(a.scope, 24) << "the answer holds for the client's /24, as the beacons were truncated";
  // Without RUM data the agents' chain decides (geo distance: the client is in
  // California, b is the nearest DC).
  cells({});
  EXPECT_EQ(rum_answers("www.example.com", "192.0.2.1"), strings{"10.9.0.2"});
}

TEST_F(rum_routing, an_endpoint_under_the_availability_threshold_is_dropped) {
  load_performance();
  cells({{rum::key_level::prefix, "198.18.5.0", "web/eu", 80, 1, 20},
         {rum::key_level::prefix, "198.18.5.0", "web/us", 20, 0.5f, 20},
         {rum::key_level::prefix, "198.18.5.0", "web/ap", 150, 1, 20}});
  EXPECT_EQ(rum_answers("www.example.com", "198.18.5.1"), strings{"10.9.0.1"});
  const std::string why = rum_explain("www.example.com", "198.18.5.1");
  EXPECT_NE(why.find("rum: evidence at prefix 198.18.5.0/24"), std::string::npos) << why;
  EXPECT_NE(why.find("endpoint us: n 20.0, p50 20.0 ms, p90 30.0 ms, availability 50%"), std::string::npos) << why;
  EXPECT_NE(why.find("dropped, under the availability threshold"), std::string::npos) << why;
}

TEST_F(rum_routing, thin_cells_fall_back_to_coarser_levels_then_to_the_agents) {
  load_performance("    rum: {min_samples: 10}\n");
  // 198.51.100.0/24 is in DE (EU) in the test geo database.
  cells({{rum::key_level::prefix, "198.51.100.0", "web/eu", 10, 1, 3}, // too thin
         {rum::key_level::country, "DE", "web/ap", 15, 1, 50},
         {rum::key_level::continent, "EU", "web/us", 15, 1, 500}});
  EXPECT_EQ(rum_answers("www.example.com", "198.51.100.9"), strings{"10.9.0.3"});
  EXPECT_NE(rum_explain("www.example.com", "198.51.100.9").find("evidence at country DE"), std::string::npos);
  // 203.0.113.0/24 is in IE: no country cell, the continent speaks.
  EXPECT_EQ(rum_answers("www.example.com", "203.0.113.9"), strings{"10.9.0.2"});
  // A network the geo database does not know: the agents' chain (list order, no coordinates).
  const std::string why = rum_explain("www.example.com", "198.18.99.1");
  EXPECT_NE(why.find("the agents' data decides"), std::string::npos) << why;
}

// tests/data/test-asn.mmdb splits France's 100.70.0.0/16 (test.mmdb)
// between AS64500 (100.70.0.0/17) and AS64501 (100.70.128.0/17).
TEST_F(rum_routing, a_network_without_cells_is_steered_by_its_autonomous_system) {
  with_asn = true;
  load_performance();
  cells({{rum::key_level::asn_country, "64500 FR", "web/eu", 15, 1, 40},
         {rum::key_level::asn_country, "64500 FR", "web/us", 60, 1, 40},
         {rum::key_level::asn_country, "64501 FR", "web/ap", 12, 1, 40},
         {rum::key_level::asn_country, "64501 FR", "web/eu", 70, 1, 40},
         {rum::key_level::country, "FR", "web/us", 5, 1, 900}});
  EXPECT_EQ(rum_answers("www.example.com", "100.70.2.5"), strings{"10.9.0.1"});
  EXPECT_EQ(rum_answers("www.example.com", "100.70.200.5"), strings{"10.9.0.3"});
  const std::string why = rum_explain("www.example.com", "100.70.2.5");
  EXPECT_NE(why.find("evidence at asn+country AS64500 FR"), std::string::npos) << why;
  // Its own network's cells come first; a system without cells falls to the
  // country.
  cells({{rum::key_level::prefix, "100.70.2.0", "web/ap", 9, 1, 40},
         {rum::key_level::asn_country, "64500 FR", "web/eu", 15, 1, 40},
         {rum::key_level::country, "FR", "web/us", 5, 1, 900}});
  EXPECT_EQ(rum_answers("www.example.com", "100.70.2.5"), strings{"10.9.0.3"});
  EXPECT_EQ(rum_answers("www.example.com", "100.70.3.5"), strings{"10.9.0.1"});
  EXPECT_EQ(rum_answers("www.example.com", "100.70.200.5"), strings{"10.9.0.2"});
  // Without the ASN database the same cells are never read at that level.
  with_asn = false;
  load_performance();
  EXPECT_EQ(rum_answers("www.example.com", "100.70.3.5"), strings{"10.9.0.2"});
}

TEST_F(rum_routing, keep_within_spreads_networks_over_the_near_best) {
  load_performance("    rum: {keep_within: 25%}\n");
  std::vector<cell> in;
  for (int n = 0; n < 64; ++n) {
    const std::string net = "198.18." + std::to_string(n) + ".0";
    in.push_back({rum::key_level::prefix, net, "web/eu", 20, 1, 20});
    in.push_back({rum::key_level::prefix, net, "web/us", 22, 1, 20});
    in.push_back({rum::key_level::prefix, net, "web/ap", 200, 1, 20});
  }
  cells(in);
  std::map<std::string, int> seen;
  for (int n = 0; n < 64; ++n) {
    auto a = rum_answers("www.example.com", "198.18." + std::to_string(n) + ".7");
    ASSERT_EQ(a.size(), 1u);
    ++seen[a[0]];
    // Deterministic: the same network keeps its endpoint.
    EXPECT_EQ(rum_answers("www.example.com", "198.18." + std::to_string(n) + ".200"), a);
  }
  EXPECT_GT(seen["10.9.0.1"], 10);
  EXPECT_GT(seen["10.9.0.2"], 10);
  EXPECT_EQ(seen.count("10.9.0.3"), 0u);
}

TEST_F(rum_routing, a_resolver_without_ecs_is_steered_by_the_networks_behind_it) {
  load_performance();
  cells({{rum::key_level::resolver, "198.18.7.0", "web/ap", 12, 1, 40},
         {rum::key_level::resolver, "198.18.7.0", "web/eu", 90, 1, 40}});
  EXPECT_EQ(rum_answers("www.example.com", "198.18.7.53"), strings{"10.9.0.3"});
  // With ECS the client's own network counts, not the resolver's pool.
  EXPECT_NE(rum_answers("www.example.com", "198.18.7.53", "198.18.8.0/24"), strings{"10.9.0.3"});
}

TEST_F(rum_routing, dc_mode_ranks_dcs_by_rum_latency_and_drops_unavailable_ones) {
  load_performance();
  cells({{rum::key_level::prefix, "198.18.5.0", "dc/a", 50, 1, 20},
         {rum::key_level::prefix, "198.18.5.0", "dc/b", 30, 0.4f, 20},
         {rum::key_level::prefix, "198.18.5.0", "dc/c", 70, 1, 20}});
  EXPECT_EQ(rum_answers("api.example.com", "198.18.5.1"), strings{"192.0.2.101"});
  const std::string why = rum_explain("api.example.com", "198.18.5.1");
  EXPECT_NE(why.find("rum: DC b: n 20.0, p50 30.0 ms"), std::string::npos) << why;
  EXPECT_NE(why.find("under the availability threshold"), std::string::npos) << why;
  // No data for the client: no DC qualifies, fail_safe.
  EXPECT_EQ(rum_answers("api.example.com", "198.18.99.1"), strings{"192.0.2.199"});
}

TEST(rum_config, fields_are_checked) {
  auto bad = [](const std::string& rum, const std::string& profile_extra = "") {
    std::string yaml = base_config() + zone_header() + "      - {name: www, type: A, profile: web}\n" +
                       "profiles:\n  - {name: web, method: performance, " + profile_extra +
                       "endpoints: [{name: eu, kind: external, target: 10.9.0.1, location: a}]}\n" + rum;
    auto r = load_config_text(yaml, "t.yaml", routing_methods());
    return r.ok() ? std::string() : r.report();
  };
  EXPECT_EQ(bad("rum: {apps: [{name: shop, keys: [0123456789abcdef], measure: [{job: web/eu, url: 'https://x/'}]}]}\n"),
            "");
  EXPECT_NE(bad("rum: {apps: [{name: shop, keys: [short]}]}\n").find("at least 16 characters"), std::string::npos);
  EXPECT_NE(bad("rum: {apps: [{name: shop, keys: [0123456789abcdef], measure: [{job: web/mars, url: 'https://x/'}]}]}\n")
              .find("'web/mars' is no profile endpoint"),
            std::string::npos);
  EXPECT_NE(bad("rum: {ipv4_prefix: 32, apps: [{name: s, keys: [0123456789abcdef]}]}\n").find("ipv4_prefix"),
            std::string::npos);
  EXPECT_NE(bad("rum: {apps: [{name: s, keys: [0123456789abcdef], origins: ['https://x/path']}]}\n").find("origin"),
            std::string::npos);
  EXPECT_NE(bad("", "source: rum, rum: {availability_threshold: 150%}, ").find("availability_threshold"),
            std::string::npos);
  EXPECT_EQ(bad("", "source: rum, rum: {min_samples: 3, keep_within: 10%, statistic: p90}, "), "");
  EXPECT_NE(bad("", "rum: {min_samples: 3}, ").find("need source: rum"), std::string::npos);
  EXPECT_NE(bad("", "source: radar, ").find("unknown source"), std::string::npos);
  EXPECT_NE(bad("rum: {max_body: 2000000, apps: [{name: s, keys: [0123456789abcdef]}]}\n").find("max_body"),
            std::string::npos); // over the listener's 1 MiB
  EXPECT_NE(bad("rum: {asn_database: /x.mmdb, apps: [{name: s, keys: [0123456789abcdef]}]}\n").find("unknown key"),
            std::string::npos); // it is geo.asn_database
}

TEST(rum_config, the_asn_database_is_checked) {
  auto compile = [](const std::string& geo) {
    std::string yaml = base_config() + zone_header() + "      - {name: www, type: A, ttl: 30, answers: [192.0.2.1]}\n";
    yaml.replace(yaml.find("geo: {"), yaml.find('\n', yaml.find("geo: {")) - yaml.find("geo: {"), geo);
    auto r = load_config_text(yaml, "t.yaml", routing_methods());
    if (!r.ok())
      return r.report();
    auto c = compile_plan(r.cfg);
    if (!c.plan)
      return c.error;
    return std::string(c.plan->geo && c.plan->geo->has_asn() ? "asn" : "no asn");
  };
  EXPECT_EQ(compile("geo: {database: " + test_mmdb() + ", asn_database: " + test_asn_mmdb() + "}"), "asn");
  EXPECT_EQ(compile("geo: {database: " + test_mmdb() + "}"), "no asn");
  const std::string missing = compile("geo: {database: " + test_mmdb() + ", asn_database: /nonexistent/asn.mmdb}");
  EXPECT_NE(missing.find("geo.asn_database"), std::string::npos) << missing;
  EXPECT_NE(missing.find("file not found"), std::string::npos) << missing;
  // A city database where the ASN one belongs: refused by name, not read as
  // a database of no systems.
  const std::string city = compile("geo: {database: " + test_mmdb() + ", asn_database: " + test_mmdb() + "}");
  EXPECT_NE(city.find("geo.asn_database"), std::string::npos) << city;
  EXPECT_NE(city.find("not an ASN database"), std::string::npos) << city;
  const std::string alone = compile("geo: {asn_database: " + test_asn_mmdb() + "}");
  EXPECT_NE(alone.find("needs geo.database"), std::string::npos) << alone;
  EXPECT_NE(compile("geo: {database: " + test_mmdb() + ", asn_databse: x}").find("unknown key"), std::string::npos);
}

TEST(rum_config, dc_mode_takes_the_steps_but_not_keep_within) {
  auto load_dc = [](const std::string& rum) {
    std::string yaml = base_config() + zone_header() +
                       "      - name: api\n        type: A\n"
                       "        dc: {source: client, metric: rum_latency, " + rum +
                       "answers: {a: [192.0.2.101], b: [192.0.2.102]}}\n";
    auto r = load_config_text(yaml, "t.yaml", routing_methods());
    return r.ok() ? std::string() : r.report();
  };
  EXPECT_EQ(load_dc("rum: {min_samples: 3, availability_threshold: 95%}, "), "");
  EXPECT_NE(load_dc("rum: {keep_within: 10%}, ").find("criterion: {within"), std::string::npos);
}

} // namespace
} // namespace gtmesh::test
