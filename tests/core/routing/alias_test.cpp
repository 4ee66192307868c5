// ALIAS answers (core/routing/alias/): an ALIAS record and alias endpoints
// answer the addresses their target resolved to, as a snapshot's
// alias_answers carry them -- by type, by health, with the target's TTL --
// and answer NODATA / are unavailable while none is known.

#include "tests/core/routing/routing_fixture.hpp"

#include <algorithm>
#include <set>

namespace gtmesh::test {
namespace {

class alias_routing : public routing_fixture {
protected:
  /// Resolutions and verdicts by target name; monitored addresses not in
  /// `down` are healthy.
  std::map<std::string, alias_resolution> resolved;
  std::set<std::string> down; ///< "name address"
  std::shared_ptr<const alias_answers> aliases;
  snapshot_ptr previous;

  void SetUp() override {
    std::string config = R"(
      - {name: "@", type: ALIAS, target: lb.example.net., monitor: mon}
      - {name: "@", type: MX, answers: ["10 mail.example.com."]}
      - {name: short, type: ALIAS, target: lb.example.net., ttl: 20}
      - {name: gone, type: ALIAS, target: missing.example.net.}
      - {name: www, type: A, profile: apex}
      - {name: www, type: AAAA, profile: apex}
      - {name: txt, type: TXT, profile: apex}
resolver: {servers: ["127.0.0.1:53"], min_ttl: 10, max_ttl: 300}
)";
    load(config, R"(
profiles:
  - name: apex
    method: priority
    endpoints:
      - {name: primary, kind: alias, target: elb.example.net., monitor: mon}
      - {name: secondary, kind: alias, target: bucket.example.net.}
)");
    resolved["lb.example.net."] = resolution({"192.0.2.10", "192.0.2.11", "2001:db8::10"}, 60);
    resolved["elb.example.net."] = resolution({"198.51.100.1", "198.51.100.2"}, 120);
    resolved["bucket.example.net."] = resolution({"203.0.113.5", "2001:db8::5"}, 30);
  }

  static alias_resolution resolution(std::vector<std::string> addresses, uint32_t ttl) {
    alias_resolution r;
    r.known = true;
    r.ttl = ttl;
    r.resolved_at_ms = now - 12'000;
    for (const auto& a : addresses)
      (a.find(':') == std::string::npos ? r.a : r.aaaa).push_back(*ip_address::parse(a));
    return r;
  }

  /// A snapshot with the current resolutions and verdicts, built on the
  /// previous one (as a decider rebuilds).
  snapshot_ptr snapshot() {
    aliases = build_alias_answers(
      *plan,
      [&](uint32_t t) -> const alias_resolution* {
        auto it = resolved.find(plan->alias_targets[t].name);
        return it == resolved.end() ? nullptr : &it->second;
      },
      [&](uint32_t t, const ip_address& a) {
        alias_health h;
        h.healthy = !down.count(plan->alias_targets[t].name + " " + a.to_string());
        h.detail = h.healthy ? "monitor up" : "monitor down";
        return h;
      },
      aliases.get());
    previous = make_snapshot(plan, view, now, previous ? previous->generation + 1 : 1, previous.get(), nullptr, aliases);
    return previous;
  }

  answer_set query(const snapshot_ptr& s, const std::string& name, const std::string& type, decision_trace* t = nullptr) {
    auto wire = dns::text_to_wire(name);
    routing_query q{*wire, static_cast<uint16_t>(*dns::parse_rr_type(type)),
                    client_info::from_source(*ip_address::parse("192.0.2.1"))};
    answer_set out;
    resolve(*s, q, ctx, out, t);
    return out;
  }

  strings texts(const snapshot_ptr& s, const answer_set& a) {
    strings out;
    for (uint16_t i = 0; i < a.count; ++i)
      out.push_back(s->answer_text(a.rdata[i]));
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(alias_routing, an_alias_answers_its_targets_addresses_by_type_with_the_targets_ttl) {
  auto s = snapshot();
  auto a = query(s, "example.com", "A");
  EXPECT_EQ(a.status, answer_status::answer);
  EXPECT_EQ(texts(s, a), (strings{"192.0.2.10", "192.0.2.11"}));
  EXPECT_EQ(a.ttl, 60u) << "no ttl: the target's (within min_ttl..max_ttl)";
  EXPECT_EQ(s->rdata_at(a.rdata[0]).entry.type, dns::rr_type::a);
  auto aaaa = query(s, "example.com", "AAAA");
  EXPECT_EQ(texts(s, aaaa), (strings{"2001:db8::10"}));
  EXPECT_EQ(s->rdata_at(aaaa.rdata[0]).entry.length, 16);
  EXPECT_EQ(texts(s, query(s, "example.com", "ANY")), (strings{"192.0.2.10", "192.0.2.11"}));
  EXPECT_EQ(query(s, "example.com", "MX").count, 1) << "other types at the name answer from their own records";
  EXPECT_EQ(query(s, "example.com", "CNAME").status, answer_status::nodata) << "an ALIAS is never a CNAME";
  auto capped = query(s, "short.example.com", "A");
  EXPECT_EQ(capped.ttl, 20u) << "the record's own ttl lowers the target's";
  resolved["lb.example.net."].ttl = 15;
  EXPECT_EQ(query(snapshot(), "short.example.com", "A").ttl, 15u) << "and the target's lowers the record's";
}

TEST_F(alias_routing, nothing_known_is_a_policy_nodata_with_a_short_ttl_and_explain_says_why) {
  auto s = snapshot();
  auto out = query(s, "gone.example.com", "A");
  EXPECT_EQ(out.status, answer_status::nodata);
  EXPECT_EQ(out.outcome, answer_outcome::nodata);
  EXPECT_EQ(out.ttl, 10u) << "resolver.min_ttl: come back soon";
  decision_trace t;
  query(s, "gone.example.com", "A", &t);
  EXPECT_NE(t.to_text().find("ALIAS target missing.example.net.: not resolved yet"), std::string::npos) << t.to_text();
  // A target with addresses of one family only: NODATA for the other, with its TTL.
  resolved["lb.example.net."] = resolution({"192.0.2.10"}, 60);
  s = snapshot();
  auto six = query(s, "example.com", "AAAA");
  EXPECT_EQ(six.status, answer_status::nodata);
  EXPECT_EQ(six.ttl, 60u);
  // Explain shows the addresses, their age, the TTL and the last failure.
  resolved["lb.example.net."].failures = 3;
  resolved["lb.example.net."].failed_at_ms = now - 2'000;
  resolved["lb.example.net."].last_failure = "timeout from 127.0.0.1:53";
  decision_trace t2;
  query(snapshot(), "example.com", "A", &t2);
  const std::string text = t2.to_text();
  EXPECT_NE(text.find("1 A, 0 AAAA, resolved 12s ago, TTL 60 s; 3 failed refresh(es) since, the last 2s ago: "
                      "timeout from 127.0.0.1:53"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("192.0.2.10"), std::string::npos) << text;
}

TEST_F(alias_routing, the_monitor_withdraws_an_address_and_all_withdrawn_answers_all_of_them) {
  down.insert("lb.example.net. 192.0.2.11");
  auto s = snapshot();
  EXPECT_EQ(texts(s, query(s, "example.com", "A")), (strings{"192.0.2.10"}));
  decision_trace t;
  query(s, "example.com", "A", &t);
  EXPECT_NE(t.to_text().find("monitor down"), std::string::npos) << t.to_text();
  // Unmonitored (short has no monitor, but shares the name): unaffected.
  EXPECT_EQ(texts(s, query(s, "short.example.com", "A")), (strings{"192.0.2.10", "192.0.2.11"}));
  down.insert("lb.example.net. 192.0.2.10");
  s = snapshot();
  auto all = query(s, "example.com", "A");
  EXPECT_EQ(texts(s, all), (strings{"192.0.2.10", "192.0.2.11"}));
  EXPECT_EQ(all.outcome, answer_outcome::fail_open);
}

TEST_F(alias_routing, alias_endpoints_fail_over_by_health_and_by_having_no_addresses) {
  auto s = snapshot();
  EXPECT_EQ(texts(s, query(s, "www.example.com", "A")), (strings{"198.51.100.1", "198.51.100.2"}));
  EXPECT_EQ(query(s, "www.example.com", "A").ttl, 30u) << "the record's ttl (30) is below the target's (120)";
  // The primary has no AAAA: unavailable for AAAA, the secondary answers.
  EXPECT_EQ(texts(s, query(s, "www.example.com", "AAAA")), (strings{"2001:db8::5"}));
  // One address down: the other answers; both down: the secondary.
  down.insert("elb.example.net. 198.51.100.1");
  s = snapshot();
  EXPECT_EQ(texts(s, query(s, "www.example.com", "A")), (strings{"198.51.100.2"}));
  down.insert("elb.example.net. 198.51.100.2");
  s = snapshot();
  EXPECT_EQ(texts(s, query(s, "www.example.com", "A")), (strings{"203.0.113.5"}));
  decision_trace t;
  query(s, "www.example.com", "A", &t);
  EXPECT_NE(t.to_text().find("0 of 2 healthy"), std::string::npos) << t.to_text();
  // Not resolved: unavailable, explained.
  down.clear();
  resolved.erase("elb.example.net.");
  s = snapshot();
  EXPECT_EQ(texts(s, query(s, "www.example.com", "A")), (strings{"203.0.113.5"}));
  decision_trace t2;
  query(s, "www.example.com", "A", &t2);
  EXPECT_NE(t2.to_text().find("not resolved yet; no A address known: unavailable"), std::string::npos) << t2.to_text();
  // An alias endpoint cannot answer TXT: the profile has nothing (fail_open finds nothing either).
  EXPECT_EQ(query(s, "txt.example.com", "TXT").count, 0);
}

TEST_F(alias_routing, a_rebuild_evaluates_again_only_profiles_reading_a_target_that_changed) {
  auto s1 = snapshot();
  const uint32_t first = s1->prepared->profiles_evaluated;
  EXPECT_GT(first, 0u);
  auto s2 = snapshot(); // nothing changed
  EXPECT_EQ(s2->prepared->profiles_evaluated, 0u);
  resolved["lb.example.net."] = resolution({"192.0.2.99"}, 60); // not read by any profile
  auto s3 = snapshot();
  EXPECT_EQ(s3->prepared->profiles_evaluated, 0u);
  EXPECT_EQ(texts(s3, query(s3, "example.com", "A")), (strings{"192.0.2.99"}));
  down.insert("elb.example.net. 198.51.100.1"); // read by apex (A and AAAA plans, and TXT)
  auto s4 = snapshot();
  EXPECT_GT(s4->prepared->profiles_evaluated, 0u);
  EXPECT_LE(s4->prepared->profiles_evaluated, first);
  EXPECT_EQ(texts(s4, query(s4, "www.example.com", "A")), (strings{"198.51.100.2"}))
    << "the prepared availability is the live one";
}

} // namespace
} // namespace gtmesh::test
