// DC mode (SPEC section 2): one test per rule.

#include "tests/core/routing/routing_fixture.hpp"

#include <random>
#include <set>

namespace gtmesh::test {
namespace {

class dc_mode : public routing_fixture {
protected:
  void SetUp() override {
    load(R"(
      - name: www
        type: A
        dc:
          source: service
          service: web
          metric: healthyBackends
          criterion: highest
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
          fail_safe: [192.0.2.250]
      - name: cool
        type: A
        dc:
          source: host
          metric: cpu
          criterion: lowest
          pick_dc_count: 2
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
          on_all_down: nodata
      - name: eq
        type: A
        dc:
          source: host
          metric: status
          criterion: {equals: up}
          pick_dc_count: 3
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
          on_all_down: nodata
      - name: near
        type: A
        dc:
          source: host
          metric: cpu
          criterion: {within: {target: 50, margin: 10}}
          pick_dc_count: 3
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
          on_all_down: nodata
      - name: best
        type: A
        dc:
          source: host
          metric: cpu
          criterion: {within: {target: best, margin: 20%}}
          pick_dc_count: 3
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
          on_all_down: nodata
      - name: gated
        type: A
        dc:
          source: service
          service: web
          metric: healthyBackends
          gate: {source: host, metric: status, criterion: {equals: up}}
          pick_dc_count: 3
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
          on_all_down: nodata
      - name: open
        type: A
        dc:
          source: host
          metric: status
          pick_dc_count: 2
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
          on_all_down: fail_open
      - name: byapi
        type: A
        dc:
          source: service
          service: api
          metric: healthyBackends
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
          fail_safe: [192.0.2.250]
      - name: www
        type: MX
        dc:
          source: host
          metric: status
          answers: {a: ["10 mx-a.example.com."], b: ["10 mx-b.example.com."]}
          fail_safe: ["99 backup.example.net."]
      - name: www
        type: AAAA
        dc:
          source: client
          metric: packetLoss
          criterion: lowest
          answers: {a: ["2001:db8::a"], b: ["2001:db8::b"]}
          fail_safe: ["2001:db8::ff"]
      - name: alias
        type: CNAME
        dc:
          source: client
          metric: packetLoss
          answers: {a: [a.example.net.], b: [b.example.net.]}
          fail_safe: [safe.example.net.]
      - name: txt
        type: TXT
        dc: {source: host, metric: cpu, answers: {a: ["from a"], b: ["from b"]}, fail_safe: ["fallback"]}
      - name: clientgated
        type: A
        dc:
          source: host
          metric: cpu
          criterion: lowest
          gate: {source: client, metric: packetLoss, criterion: {within: {target: 0, margin: 1}}}
          answers: {a: [192.0.2.1], b: [192.0.2.2]}
          fail_safe: [192.0.2.250]
      - name: _x._tcp
        type: SRV
        dc: {source: host, metric: cpu, answers: {a: ["10 5 443 a.example.com."], b: ["10 5 443 b.example.com."]}}
)");
  }
};

TEST_F(dc_mode, highest_picks_the_dc_with_the_most_healthy_backends) {
  state("services: {web: {a: {healthyBackends: 2}, b: {healthyBackends: 5}, c: {healthyBackends: 3}}}");
  EXPECT_EQ(answers("www.example.com"), strings{"192.0.2.2"});
  state("services: {web: {a: {healthyBackends: 7}, b: {healthyBackends: 5}, c: {healthyBackends: 3}}}");
  EXPECT_EQ(answers("www.example.com"), strings{"192.0.2.1"});
}

TEST_F(dc_mode, lowest_ranks_ascending_and_pick_dc_count_takes_that_many) {
  state("hosts: {a: {cpu: 70}, b: {cpu: 20}, c: {cpu: 45}}");
  EXPECT_EQ(answers("cool.example.com"), (strings{"192.0.2.2", "192.0.2.3"}));
}

TEST_F(dc_mode, fewer_qualifying_dcs_than_pick_count_returns_only_those) {
  // c has no measurement at all: it is never invented to fill the count.
  state("hosts: {b: {cpu: 20}}");
  EXPECT_EQ(answers("cool.example.com"), strings{"192.0.2.2"});
}

TEST_F(dc_mode, equals_keeps_only_matching_dcs_in_config_order) {
  state("hosts: {a: {status: up}, b: {status: down}, c: {status: up}}");
  EXPECT_EQ(answers("eq.example.com"), (strings{"192.0.2.1", "192.0.2.3"}));
}

TEST_F(dc_mode, within_an_absolute_margin_of_a_target) {
  state("hosts: {a: {cpu: 38}, b: {cpu: 55}, c: {cpu: 45}}");
  // |55-50| = 5 and |45-50| = 5 qualify (ties: lower cpu first), 38 is 12 away.
  EXPECT_EQ(answers("near.example.com"), (strings{"192.0.2.3", "192.0.2.2"}));
}

TEST_F(dc_mode, within_a_percentage_of_the_best_value) {
  // best (lowest cpu) = 40; 20% of 40 = 8: 40 and 47 qualify, 49 does not.
  state("hosts: {a: {cpu: 49}, b: {cpu: 40}, c: {cpu: 47}}");
  EXPECT_EQ(answers("best.example.com"), (strings{"192.0.2.2", "192.0.2.3"}));
}

TEST_F(dc_mode, gate_excludes_dcs_failing_the_other_source) {
  state(R"(
hosts: {a: {status: up}, b: {status: down}, c: {status: up}}
services: {web: {a: {healthyBackends: 1}, b: {healthyBackends: 9}, c: {healthyBackends: 3}}})");
  EXPECT_EQ(answers("gated.example.com"), (strings{"192.0.2.3", "192.0.2.1"}));
}

TEST_F(dc_mode, gate_on_stale_data_fails) {
  state(R"(
hosts: {a: {status: up}, b: {status: {value: up, age: 31s}}, c: {status: up}}
services: {web: {a: {healthyBackends: 1}, b: {healthyBackends: 9}, c: {healthyBackends: 3}}})");
  // host_interval 10s x stale_after 3 = 30s: b's gate evidence is stale.
  EXPECT_EQ(answers("gated.example.com"), (strings{"192.0.2.3", "192.0.2.1"}));
  EXPECT_NE(explain("gated.example.com").find("stale"), std::string::npos);
}

TEST_F(dc_mode, stale_selection_metric_never_counts_as_healthy_evidence) {
  state("services: {web: {a: {healthyBackends: {value: 9, age: 31s}}, b: {healthyBackends: 1}}}");
  EXPECT_EQ(answers("www.example.com"), strings{"192.0.2.2"});
  state("services: {web: {a: {healthyBackends: {value: 9, age: 29s}}, b: {healthyBackends: 1}}}");
  EXPECT_EQ(answers("www.example.com"), strings{"192.0.2.1"});
}

TEST_F(dc_mode, a_dc_with_zero_healthy_backends_never_qualifies) {
  state("services: {web: {a: {healthyBackends: 0}, b: {healthyBackends: 0}, c: {healthyBackends: 0}}}");
  EXPECT_EQ(answers("www.example.com"), strings{"192.0.2.250"});
}

TEST_F(dc_mode, fail_safe_when_no_dc_qualifies_and_never_nxdomain) {
  // No measurements at all.
  auto a = ask("www.example.com");
  EXPECT_EQ(a.status, answer_status::answer);
  EXPECT_EQ(answers(a), strings{"192.0.2.250"});
}

TEST_F(dc_mode, nodata_when_configured_and_nothing_qualifies) {
  EXPECT_EQ(ask("cool.example.com").status, answer_status::nodata);
}

TEST_F(dc_mode, fail_open_answers_the_first_dcs_as_if_healthy) {
  state("hosts: {a: {status: down}, b: {status: down}, c: {status: down}}");
  EXPECT_EQ(answers("open.example.com"), (strings{"192.0.2.1", "192.0.2.2"}));
}

TEST_F(dc_mode, drained_dc_is_excluded_even_when_best) {
  state(R"(
services: {web: {a: {healthyBackends: 9}, b: {healthyBackends: 1}}}
drained: [a])");
  EXPECT_EQ(answers("www.example.com"), strings{"192.0.2.2"});
}

TEST_F(dc_mode, services_on_the_same_dcs_route_independently) {
  state(R"(
services:
  web: {a: {healthyBackends: 9}, b: {healthyBackends: 1}}
  api: {a: {healthyBackends: 1}, b: {healthyBackends: 9}})");
  EXPECT_EQ(answers("www.example.com"), strings{"192.0.2.1"});
  EXPECT_EQ(answers("byapi.example.com"), strings{"192.0.2.2"});
}

TEST_F(dc_mode, each_record_type_of_one_name_has_its_own_policy) {
  state(R"(
hosts: {a: {status: down, cpu: 10}, b: {status: up, cpu: 20}}
services: {web: {a: {healthyBackends: 9}, b: {healthyBackends: 1}}}
clients: {"198.51.100.0/24": {a: {packetLoss: 5}, b: {packetLoss: 1}}})");
  EXPECT_EQ(answers("www.example.com", "A"), strings{"192.0.2.1"});                   // healthyBackends: a
  EXPECT_EQ(answers("www.example.com", "MX"), strings{"10 mx-b.example.com."});       // host status: b
  EXPECT_EQ(answers("www.example.com", "AAAA", "198.51.100.9"), strings{"2001:db8::b"}); // client loss: b
  EXPECT_EQ(answers("txt.example.com", "TXT"), strings{"\"from a\""});                // lowest cpu: a
  EXPECT_EQ(answers("_x._tcp.example.com", "SRV"), strings{"10 5 443 a.example.com."});
}

TEST_F(dc_mode, client_source_follows_the_ecs_prefix_and_reports_its_scope) {
  state(R"(
clients:
  "198.51.100.0/24": {a: {packetLoss: 5}, b: {packetLoss: 1}}
  "203.0.113.0/24": {a: {packetLoss: 0}, b: {packetLoss: 3}})");
  auto one = ask("alias.example.com", "CNAME", "10.9.9.9", "198.51.100.0/24");
  EXPECT_EQ(answers(one), strings{"b.example.net."});
  EXPECT_EQ(one.scope, 24);
  auto two = ask("alias.example.com", "CNAME", "10.9.9.9", "203.0.113.0/24");
  EXPECT_EQ(answers(two), strings{"a.example.net."});
  // Without ECS the resolver's source address decides.
  EXPECT_EQ(answers("alias.example.com", "CNAME", "203.0.113.77"), strings{"a.example.net."});
}

TEST_F(dc_mode, a_gate_on_a_client_metric_is_judged_per_client_prefix_with_its_scope) {
  // "never send this client to a DC whose path to it loses more than 1 %"
  state(R"(
hosts: {a: {cpu: 10}, b: {cpu: 80}}
clients:
  "198.51.100.0/24": {a: {packetLoss: 5}, b: {packetLoss: 0.5}}
  "203.0.113.0/24": {a: {packetLoss: 0}, b: {packetLoss: 0}})");
  auto lossy = ask("clientgated.example.com", "A", "10.9.9.9", "198.51.100.0/24");
  EXPECT_EQ(answers(lossy), strings{"192.0.2.2"}) << "a has the lower cpu but fails the gate for this client";
  EXPECT_EQ(lossy.scope, 24);
  EXPECT_EQ(answers("clientgated.example.com", "A", "203.0.113.5"), strings{"192.0.2.1"});
  // A client with no path data fails the gate everywhere.
  auto unknown = ask("clientgated.example.com", "A", "192.0.2.77");
  EXPECT_EQ(answers(unknown), strings{"192.0.2.250"});
  EXPECT_TRUE(unknown.client_unmeasured);
}

TEST_F(dc_mode, an_unmeasured_client_gets_fail_safe_and_is_flagged_for_measurement) {
  state(R"(clients: {"198.51.100.0/24": {a: {packetLoss: 5}, b: {packetLoss: 1}}})");
  auto r = ask("alias.example.com", "CNAME", "192.0.2.77");
  EXPECT_EQ(answers(r), strings{"safe.example.net."});
  EXPECT_TRUE(r.client_unmeasured);
  EXPECT_FALSE(ask("alias.example.com", "CNAME", "198.51.100.3").client_unmeasured);
}

TEST_F(dc_mode, host_and_service_decisions_do_not_depend_on_the_client) {
  state("services: {web: {a: {healthyBackends: 2}}}");
  EXPECT_EQ(ask("www.example.com", "A", "", "198.51.100.0/24").scope, 0);
}

TEST_F(dc_mode, trace_lists_every_candidate_with_value_age_gate_rank_and_reason) {
  state(R"(
hosts: {a: {status: up}, b: {status: down}, c: {status: up}}
services: {web: {a: {healthyBackends: 1}, b: {healthyBackends: 9}, c: {healthyBackends: {value: 3, age: 12s}}}})");
  decision_trace t;
  ask("gated.example.com", "A", "192.0.2.1", "", &t);
  auto c = t.candidates();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0]->name, "a");
  EXPECT_EQ(c[0]->rank, 2);
  EXPECT_TRUE(c[0]->picked);
  EXPECT_EQ(c[1]->name, "b");
  EXPECT_FALSE(c[1]->picked);
  EXPECT_NE(c[1]->gate.find("host status = 0"), std::string::npos) << c[1]->gate;
  EXPECT_EQ(c[2]->age_ms, 12000);
  EXPECT_EQ(*c[2]->value, 3);
  EXPECT_EQ(c[2]->rank, 1);
  EXPECT_NE(t.outcome.find("192.0.2.3"), std::string::npos);
}

TEST_F(dc_mode, a_prepared_ranking_is_reused_until_its_first_input_turns_stale) {
  // b is best but its value is 25 s old: it turns stale 5 s + 1 ms from now.
  state("services: {web: {a: {healthyBackends: 2}, b: {healthyBackends: {value: 9, age: 25s}}}}");
  auto snap = make_snapshot(plan, view, now, 1);
  ASSERT_TRUE(snap->prepared);
  EXPECT_EQ(snap->prepared->valid_until_ms, now + 5001);
  auto wire = *dns::text_to_wire("www.example.com");
  routing_query q{wire, 1, client_info::from_source(*ip_address::parse("192.0.2.1"))};
  answer_set out;
  ctx.now_ms = now + 5000;
  resolve(*snap, q, ctx, out);
  EXPECT_EQ(answers(out), strings{"192.0.2.2"});
  // After expiry the same snapshot ranks live and b no longer counts.
  ctx.now_ms = now + 5001;
  resolve(*snap, q, ctx, out);
  EXPECT_EQ(answers(out), strings{"192.0.2.1"});
}

TEST_F(dc_mode, prepared_and_live_rankings_agree_on_random_states) {
  std::mt19937 gen(3);
  for (int round = 0; round < 300; ++round) {
    std::string s = "hosts: {";
    for (const char* dc : {"a", "b", "c"})
      s += std::string(dc) + ": {status: " + (gen() % 4 ? "up" : "down") + ", cpu: {value: " +
           std::to_string(gen() % 100) + ", age: " + std::to_string(gen() % 40) + "s}}, ";
    s += "}\nservices: {web: {";
    for (const char* dc : {"a", "b", "c"})
      s += std::string(dc) + ": {healthyBackends: {value: " + std::to_string(gen() % 4) + ", age: " +
           std::to_string(gen() % 40) + "s}}, ";
    s += "}}\nclients: {";
    for (const char* net : {"198.51.100.0/24", "198.51.100.128/25", "203.0.113.0/24"})
      s += "\"" + std::string(net) + "\": {a: {packetLoss: {value: " + std::to_string(gen() % 5) + ", age: " +
           std::to_string(gen() % 200) + "s}}, b: {packetLoss: " + std::to_string(gen() % 5) + "}}, ";
    s += "}\n";
    state(s);
    auto prepared = make_snapshot(plan, view, now, 1);
    routing_snapshot live{plan, view, 1, nullptr};
    const char* queries[][3] = {{"www", "A", "192.0.2.1"},     {"cool", "A", "192.0.2.1"},
                                {"eq", "A", "192.0.2.1"},      {"near", "A", "192.0.2.1"},
                                {"best", "A", "192.0.2.1"},    {"gated", "A", "192.0.2.1"},
                                {"open", "A", "192.0.2.1"},    {"txt", "TXT", "192.0.2.1"},
                                {"www", "AAAA", "198.51.100.7"}, {"www", "AAAA", "198.51.100.200"},
                                {"alias", "CNAME", "203.0.113.9"}, {"alias", "CNAME", "192.0.2.9"}};
    for (const auto& [name, type_text, client] : queries) {
      auto wire = *dns::text_to_wire(std::string(name) + ".example.com");
      uint16_t type = static_cast<uint16_t>(*dns::parse_rr_type(type_text));
      routing_query q{wire, type, client_info::from_source(*ip_address::parse(client))};
      for (int64_t later : {0, 3000, 15000, 120000}) {
        ctx.now_ms = now + later;
        answer_set a, b;
        uint32_t turn = ctx.rotation[0];
        resolve(*prepared, q, ctx, a);
        std::fill(ctx.rotation.begin(), ctx.rotation.end(), turn);
        resolve(live, q, ctx, b);
        ASSERT_EQ(answers(a), answers(b)) << name << " at +" << later << "ms\n" << s;
      }
    }
  }
}

TEST_F(dc_mode, a_rebuild_ranks_only_what_a_change_reaches_and_equals_a_full_build) {
  // Records over different sets of DCs, so that one DC's change reaches
  // some of them only; two read client metrics.
  load(R"(
      - {name: ra, type: A, dc: {source: host, metric: cpu, answers: {a: [192.0.2.1]}}}
      - {name: rb, type: A, dc: {source: host, metric: cpu, criterion: lowest, answers: {b: [192.0.2.2]}}}
      - {name: rc, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, answers: {c: [192.0.2.3]}}}
      - {name: rab, type: A, dc: {source: host, metric: cpu, criterion: lowest, pick_dc_count: 2, gate: {source: host, metric: status, criterion: {equals: up}}, answers: {a: [192.0.2.1], b: [192.0.2.2]}}}
      - {name: rbc, type: A, dc: {source: service, service: api, metric: healthyBackends, criterion: highest, answers: {b: [192.0.2.2], c: [192.0.2.3]}}}
      - {name: rca, type: A, dc: {source: host, metric: cpu, criterion: {within: {target: best, margin: 20%}}, pick_dc_count: 2, answers: {c: [192.0.2.3], a: [192.0.2.1]}}}
      - {name: pa, type: A, dc: {source: client, metric: packetLoss, criterion: lowest, answers: {a: [192.0.2.1], c: [192.0.2.3]}}}
      - {name: pb, type: A, dc: {source: host, metric: cpu, gate: {source: client, metric: packetLoss, criterion: {within: {target: 0, margin: 1}}}, answers: {b: [192.0.2.2]}}}
)");
  const char* dcs[] = {"a", "b", "c"};
  const char* nets[] = {"198.51.100.0/24", "203.0.113.0/24", "192.0.2.0/25"};
  std::mt19937 gen(11);
  auto host = [&](const char* dc) {
    return std::string(dc) + ": {status: " + (gen() % 4 ? "up" : "down") + ", cpu: {value: " +
           std::to_string(gen() % 100) + ", age: " + std::to_string(gen() % 40) + "s}}";
  };
  auto service = [&](const char* dc) {
    return std::string(dc) + ": {healthyBackends: {value: " + std::to_string(gen() % 4) + ", age: " +
           std::to_string(gen() % 40) + "s}}";
  };
  auto client = [&](const char* net) {
    return "\"" + std::string(net) + "\": {a: {packetLoss: {value: " + std::to_string(gen() % 5) + ", age: " +
           std::to_string(gen() % 200) + "s}}, b: {packetLoss: " + std::to_string(gen() % 3) + "}}";
  };
  std::map<std::string, std::string> hosts, web, api, clients;
  for (const char* dc : dcs) {
    hosts[dc] = host(dc);
    web[dc] = service(dc);
    api[dc] = service(dc);
  }
  size_t client_count = 2;
  for (const char* net : nets)
    clients[net] = client(net);

  const auto plans = static_cast<uint32_t>(plan->dc_rankings.size());
  snapshot_ptr previous;
  int64_t at = now;
  uint32_t partial_rounds = 0;
  for (int round = 0; round < 400; ++round) {
    // Change nothing, one thing, or several: a DC's host or service cells,
    // a client row's cells, the set of client rows; and let time pass.
    const unsigned what = gen() % 8;
    const char* dc = dcs[gen() % 3];
    if (what == 1 || what == 5)
      hosts[dc] = host(dc);
    if (what == 2 || what == 5)
      (gen() % 2 ? web : api)[dc] = service(dc);
    if (what == 3) {
      const char* net = nets[gen() % 3];
      clients[net] = client(net);
    }
    if (what == 4)
      client_count = 1 + gen() % 3;
    if (what == 6)
      at += gen() % 20000;
    std::string text = "hosts: {";
    for (const char* d : dcs)
      text += hosts[d] + ", ";
    text += "}\nservices: {web: {";
    for (const char* d : dcs)
      text += web[d] + ", ";
    text += "}, api: {";
    for (const char* d : dcs)
      text += api[d] + ", ";
    text += "}}\nclients: {";
    for (size_t i = 0; i < client_count; ++i)
      text += clients[nets[i]] + ", ";
    text += "}\n";
    state(text);

    auto full = make_snapshot(plan, view, at, 1);
    auto next = make_snapshot(plan, view, at, 1, previous.get());
    const prepared_decisions& f = *full->prepared;
    const prepared_decisions& n = *next->prepared;
    ASSERT_EQ(f.dc.size(), n.dc.size());
    ASSERT_EQ(f.client_first, n.client_first) << "round " << round;
    ASSERT_EQ(f.valid_until_ms, n.valid_until_ms) << "round " << round << "\n" << text;
    auto same = [&](const prepared_decisions::dc_ranking& x, const prepared_decisions::dc_ranking& y) {
      EXPECT_EQ(x.valid_until_ms, y.valid_until_ms);
      ASSERT_EQ(x.count, y.count);
      for (uint16_t i = 0; i < x.count; ++i)
        EXPECT_EQ(f.picks[x.first + i], n.picks[y.first + i]);
    };
    for (uint32_t k = 0; k < plans; ++k) {
      SCOPED_TRACE("round " + std::to_string(round) + " plan " + std::to_string(k) + "\n" + text);
      if (f.client_first[k] == prepared_decisions::no_rows) {
        same(f.dc[k], n.dc[k]);
        continue;
      }
      for (size_t row = 0; row <= view->client_row_count(); ++row)
        same(f.per_client[f.client_first[k] + row], n.per_client[n.client_first[k] + row]);
    }
    // A full build ranks everything: each plan, each client row of the others.
    EXPECT_EQ(f.ranked, f.per_client.size() + static_cast<size_t>(std::count(
                                                f.client_first.begin(), f.client_first.end(), prepared_decisions::no_rows)));
    if (previous && n.ranked < f.ranked)
      ++partial_rounds;
    if (previous && what == 0)
      EXPECT_EQ(n.ranked, 0u) << "nothing changed and no time passed: round " << round;
    previous = next;
  }
  // The rebuilds did reuse rankings (the comparison above is not between
  // two full builds).
  EXPECT_GT(partial_rounds, 100u);
}

class dc_rankings : public routing_fixture {};

TEST_F(dc_rankings, records_that_rank_alike_share_one_ranking_and_each_answers_its_own_addresses) {
  // s1, s2 and s3 rank alike (answers, balance, fail_safe, on_all_down and
  // type are not part of a ranking); each other record differs from s1 in
  // one thing a ranking reads.
  load(R"(
      - {name: s1, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, answers: {a: [192.0.2.1], b: [192.0.2.2]}, fail_safe: [192.0.2.250]}}
      - {name: s2, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, balance: all, answers: {a: [198.51.100.1, 198.51.100.11], b: [198.51.100.2]}, on_all_down: nodata}}
      - {name: s3, type: TXT, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, answers: {a: ["from a"], b: ["from b"]}}}
      - {name: order, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, answers: {b: [192.0.2.2], a: [192.0.2.1]}}}
      - {name: three, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}}}
      - {name: svc, type: A, dc: {source: service, service: api, metric: healthyBackends, criterion: highest, answers: {a: [192.0.2.1], b: [192.0.2.2]}}}
      - {name: metric, type: A, dc: {source: host, metric: status, criterion: highest, answers: {a: [192.0.2.1], b: [192.0.2.2]}}}
      - {name: crit, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: lowest, answers: {a: [192.0.2.1], b: [192.0.2.2]}}}
      - {name: pick, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, pick_dc_count: 2, answers: {a: [192.0.2.1], b: [192.0.2.2]}}}
      - {name: gate, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, gate: {source: host, metric: status, criterion: {equals: up}}, answers: {a: [192.0.2.1], b: [192.0.2.2]}}}
      - {name: margin, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, switch_margin: 1, answers: {a: [192.0.2.1], b: [192.0.2.2]}}}
      - {name: hold, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, hold_down: 30s, answers: {a: [192.0.2.1], b: [192.0.2.2]}}}
      - {name: slow, type: A, dc: {source: service, service: web, metric: healthyBackends, criterion: highest, slow_start: 1m, answers: {a: [192.0.2.1], b: [192.0.2.2]}}}
)");
  ASSERT_FALSE(HasFatalFailure());
  const routing_plan& p = *plan;
  auto ranking_of = [&](std::string_view name) {
    for (const record_plan& r : p.records)
      if (r.mode == record_mode::dc && r.name.substr(0, r.name.find('.')) == name)
        return p.dc_plans[r.policy].ranking;
    ADD_FAILURE() << "no DC-mode record " << name;
    return no_index;
  };
  const uint32_t shared = ranking_of("s1");
  EXPECT_EQ(ranking_of("s2"), shared);
  EXPECT_EQ(ranking_of("s3"), shared);
  std::set<uint32_t> distinct{shared};
  for (const char* other : {"order", "three", "svc", "metric", "crit", "pick", "gate", "margin", "hold", "slow"}) {
    EXPECT_NE(ranking_of(other), shared) << other;
    distinct.insert(ranking_of(other));
  }
  EXPECT_EQ(distinct.size(), 11u) << "each record that differs in one thing has a ranking of its own";
  EXPECT_EQ(p.dc_rankings.size(), 11u);
  EXPECT_EQ(p.dc_plans.size(), 13u);
  // Only rankings that read DC c are indexed under it.
  EXPECT_EQ(p.dc_rankings_first[3] - p.dc_rankings_first[2], 1u);
  EXPECT_EQ(p.dc_rankings_of[p.dc_rankings_first[2]], ranking_of("three"));

  // One ranking, each record's own answers; a flip moves all three.
  state("services: {web: {a: {healthyBackends: 2}, b: {healthyBackends: 1}, c: {healthyBackends: 1}}}");
  EXPECT_EQ(answers("s1.example.com"), strings{"192.0.2.1"});
  EXPECT_EQ(answers("s2.example.com"), (strings{"198.51.100.1", "198.51.100.11"}));
  EXPECT_EQ(answers("s3.example.com", "TXT"), strings{"\"from a\""});
  auto before = make_snapshot(plan, view, now, 1);
  state("services: {web: {a: {healthyBackends: 0}, b: {healthyBackends: 1}, c: {healthyBackends: 1}}}");
  EXPECT_EQ(answers("s1.example.com"), strings{"192.0.2.2"});
  EXPECT_EQ(answers("s2.example.com"), strings{"198.51.100.2"});
  EXPECT_EQ(answers("s3.example.com", "TXT"), strings{"\"from b\""});
  // All down: each record's own on_all_down.
  state("services: {web: {a: {healthyBackends: 0}, b: {healthyBackends: 0}, c: {healthyBackends: 1}}}");
  EXPECT_EQ(answers("s1.example.com"), strings{"192.0.2.250"});
  EXPECT_TRUE(answers("s2.example.com").empty());
  // A rebuild after DC c alone changed computes only the one ranking that
  // reads c; the others, s1's included, are carried.
  state("services: {web: {a: {healthyBackends: 2}, b: {healthyBackends: 1}, c: {healthyBackends: 0}}}");
  auto after = make_snapshot(plan, view, now, 2, before.get());
  EXPECT_EQ(after->prepared->dc.size(), 11u);
  EXPECT_EQ(after->prepared->ranked, 1u);
}

} // namespace
} // namespace gtmesh::test
