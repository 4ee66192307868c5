// The measurement state file parser is total: every malformed state is an
// error naming file, line and field, never an exception, and no value it
// accepts is a NaN, an infinity or an overflowed time. Each case below is a
// class of input that tests/fuzz/state_file_fuzz.cpp (or a review of what it
// runs) found escaping as an exception or undefined behaviour.

#include "tests/core/routing/routing_fixture.hpp"

#include <algorithm>

namespace gtmesh::test {
namespace {

class state_file : public routing_fixture {
protected:
  void SetUp() override { load("      - {name: www, type: A, answers: [192.0.2.1]}\n"); }

  /// Loads `yaml` as a state: no exception, rejected, and an error at `line`
  /// whose field contains `field` and whose message contains `message`.
  void expect_error(const std::string& yaml, int line, const std::string& field, const std::string& message) {
    state_load_result r;
    try {
      r = load_state_text(yaml, "state.yaml", *plan, now);
    } catch (const std::exception& e) {
      FAIL() << "the parser threw: " << e.what() << "\n" << yaml;
    }
    EXPECT_EQ(r.view, nullptr) << "accepted:\n" << yaml;
    bool found = false;
    std::string all;
    for (const auto& e : r.errors) {
      all += e.to_string() + "\n";
      if (e.file == "state.yaml" && e.line == line && e.field.find(field) != std::string::npos &&
          e.message.find(message) != std::string::npos)
        found = true;
    }
    EXPECT_TRUE(found) << "wanted line " << line << " field~" << field << " message~" << message << "\ngot:\n" << all;
  }
};

TEST_F(state_file, a_value_map_without_value_is_an_error_not_an_exception) {
  // YAML::Node::reset() with the zombie node of a missing key threw InvalidNode.
  expect_error("hosts:\n  a: {status: {age: 5s}}\n", 2, "hosts.a.status", "expected a number, up or down");
}

TEST_F(state_file, non_finite_values_are_rejected) {
  expect_error("hosts:\n  a: {cpu: nan}\n", 2, "hosts.a.cpu", "finite");
  expect_error("hosts:\n  a: {cpu: inf}\n", 2, "hosts.a.cpu", "finite");
  expect_error("hosts:\n  a: {cpu: 1e999}\n", 2, "hosts.a.cpu", "finite");
  expect_error("services:\n  web: {b: {healthyBackends: {value: -nan, age: 1s}}}\n", 2, "services.web.b",
               "finite");
}

TEST_F(state_file, ages_and_times_that_overflow_are_rejected) {
  // 1e300 hours: the double -> int64 conversion of milliseconds was undefined.
  expect_error("hosts:\n  a: {status: {value: up, age: 1e300h}}\n", 2, "hosts.a.status.age", "duration");
  // now - age below INT64_MIN was a signed overflow.
  expect_error("now: -9223372036854775000\nhosts:\n  a: {status: up}\n", 1, "now", "years 1..9999");
  expect_error("hosts:\n  a: {status: {value: up, age: 876000000h}}\n", 2, "hosts.a.status.age",
               "no further back than year 1");
  expect_error("hosts:\n  a: {status: {value: up, age: nan}}\n", 2, "hosts.a.status.age", "duration");
}

TEST_F(state_file, non_scalar_keys_and_wrong_shapes_are_errors) {
  expect_error("hosts:\n  [a]: {cpu: 1}\n", 2, "hosts", "expected a datacenter name");
  expect_error("services:\n  {web: 1}: {}\n", 2, "services", "expected a name as the key");
  expect_error("hosts:\n  a: {[cpu]: 1}\n", 2, "hosts.a", "expected a name as the key");
  expect_error("drained: [{a: 1}]\n", 1, "drained[0]", "expected a datacenter name");
  expect_error("hosts: a\n", 1, "hosts", "expected a mapping");
  expect_error("- now\n", 1, "", "expected a mapping");
  expect_error("hosts: {}\nhosts: {}\n", 2, "hosts", "duplicate key");
  expect_error("hosts:\n  a: {status: {value: up, value: down}}\n", 2, "status.value", "duplicate key");
}

TEST_F(state_file, deep_nesting_and_oversized_input_are_errors) {
  std::string deep(100'000, '[');
  expect_error(deep, 1, "", "YAML syntax");
  auto r = load_state_text(std::string(max_state_bytes + 1, '#'), "state.yaml", *plan, now);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("the limit is"), std::string::npos);
  auto z = load_state_file("/dev/zero", *plan, now);
  ASSERT_FALSE(z.errors.empty());
  EXPECT_NE(z.errors[0].message.find("the limit is"), std::string::npos) << z.errors[0].to_string();
}

TEST_F(state_file, a_good_state_still_loads_with_its_ages) {
  auto r = load_state_text("now: 2026-11-29T12:00:00Z\nhosts:\n  a: {status: {value: up, age: 2m}, cpu: 5}\n",
                           "state.yaml", *plan, now);
  ASSERT_TRUE(r.view) << (r.errors.empty() ? "" : r.errors[0].to_string());
  EXPECT_EQ(r.now_ms, 1'795'953'600'000);
}


// The `aliases` section: what the deciders resolved each ALIAS target to,
// so that `gtmesh explain --state` answers ALIAS records and alias
// endpoints without a live resolver (docs/explain.md).
class state_file_aliases : public state_file {
protected:
  void SetUp() override {
    load(R"(      - {name: "@", type: ALIAS, target: lb.example.net., monitor: mon}
      - {name: www, type: A, profile: failover}
      - {name: plain, type: ALIAS, target: static.example.net.}
resolver: {servers: ["127.0.0.1:53"], min_ttl: 20, max_ttl: 45}
)",
         R"(
profiles:
  - name: failover
    method: priority
    endpoints:
      - {name: elb, kind: alias, target: lb.example.net., monitor: mon}
      - {name: s3, kind: alias, target: static.example.net.}
)");
  }

  /// Answers of NAME TYPE from a snapshot with the state's ALIAS answers.
  strings with(const state_load_result& st, const std::string& name, const std::string& type,
               answer_set* out = nullptr, decision_trace* trace = nullptr) {
    EXPECT_TRUE(st.view) << (st.errors.empty() ? "" : st.errors[0].to_string());
    if (!st.view)
      return {};
    snapshot_ptr snap = make_snapshot(plan, st.view, now, 1, nullptr, nullptr, st.aliases);
    const auto wire = dns::text_to_wire(name);
    routing_query q{*wire, static_cast<uint16_t>(*dns::parse_rr_type(type)),
                    client_info::from_source(*ip_address::parse("192.0.2.1"))};
    answer_set a;
    resolve(*snap, q, ctx, a, trace);
    strings texts;
    for (uint16_t i = 0; i < a.count; ++i)
      texts.push_back(snap->answer_text(a.rdata[i]));
    std::sort(texts.begin(), texts.end());
    if (out)
      *out = a;
    return texts;
  }
};

TEST_F(state_file_aliases, an_alias_target_answers_the_addresses_the_state_gives_it) {
  auto st = load_state_text("aliases:\n"
                            "  lb.example.net.: {addresses: [192.0.2.10, 192.0.2.11, 2001:db8::10], ttl: 30, age: 12s}\n"
                            "  Static.Example.Net: {addresses: [203.0.113.5]}\n",
                            "state.yaml", *plan, now);
  ASSERT_TRUE(st.aliases) << (st.errors.empty() ? "" : st.errors[0].to_string());
  answer_set a;
  decision_trace t;
  EXPECT_EQ(with(st, "example.com", "A", &a, &t), (strings{"192.0.2.10", "192.0.2.11"}));
  EXPECT_EQ(a.ttl, 30u);
  EXPECT_NE(t.to_text().find("resolved 12s ago"), std::string::npos) << t.to_text();
  EXPECT_EQ(with(st, "example.com", "AAAA"), (strings{"2001:db8::10"}));
  EXPECT_EQ(with(st, "www.example.com", "A"), (strings{"192.0.2.10", "192.0.2.11"}));
  answer_set p;
  EXPECT_EQ(with(st, "plain.example.com", "A", &p), (strings{"203.0.113.5"})) << "names match case-insensitively";
  EXPECT_EQ(p.ttl, 45u) << "no ttl: 60, kept within resolver min_ttl..max_ttl (here 45) as a decider keeps it";
  EXPECT_EQ(with(st, "plain.example.com", "AAAA"), strings{}) << "no AAAA known: NODATA";
}

TEST_F(state_file_aliases, down_addresses_are_withdrawn_and_all_down_fails_the_endpoint_over) {
  auto some = load_state_text("aliases:\n  lb.example.net.: {addresses: [192.0.2.10, 192.0.2.11], down: [192.0.2.10]}\n"
                              "  static.example.net.: {addresses: [203.0.113.5]}\n",
                              "state.yaml", *plan, now);
  EXPECT_EQ(with(some, "example.com", "A"), (strings{"192.0.2.11"}));
  auto all = load_state_text("aliases:\n  lb.example.net.: {addresses: [192.0.2.10], down: [192.0.2.10]}\n"
                             "  static.example.net.: {addresses: [203.0.113.5]}\n",
                             "state.yaml", *plan, now);
  EXPECT_EQ(with(all, "example.com", "A"), (strings{"192.0.2.10"})) << "an ALIAS whose addresses are all down answers all";
  EXPECT_EQ(with(all, "www.example.com", "A"), (strings{"203.0.113.5"})) << "an alias endpoint fails over";
}

TEST_F(state_file_aliases, a_target_the_state_leaves_out_is_not_resolved) {
  auto st = load_state_text("aliases:\n  static.example.net.: {addresses: [203.0.113.5]}\n", "state.yaml", *plan, now);
  EXPECT_EQ(with(st, "example.com", "A"), strings{});
  EXPECT_EQ(with(st, "www.example.com", "A"), (strings{"203.0.113.5"}));
}

TEST_F(state_file_aliases, bad_alias_entries_are_errors_at_their_line) {
  expect_error("aliases:\n  nope.example.net.: {addresses: [192.0.2.1]}\n", 2, "aliases.nope", "no ALIAS record");
  expect_error("aliases:\n  lb.example.net.: {addresses: [lb.example.net]}\n", 2, "addresses[0]",
               "not an IPv4 or IPv6 address");
  expect_error("aliases:\n  lb.example.net.: {ttl: 60}\n", 2, "aliases.lb.example.net..addresses", "required");
  expect_error("aliases:\n  lb.example.net.: {addresses: [192.0.2.1], down: [192.0.2.2]}\n", 2, "down[0]",
               "not one of the target's addresses");
  expect_error("aliases:\n  static.example.net.: {addresses: [192.0.2.1], down: [192.0.2.1]}\n", 2,
               "aliases.static.example.net..down", "has no monitor");
  expect_error("aliases:\n  lb.example.net.: {addresses: [192.0.2.1], weight: 3}\n", 2, "weight", "unknown key");
  expect_error("aliases:\n  lb.example.net.: {addresses: [192.0.2.1], ttl: -1}\n", 2, "ttl", "TTL in seconds");
  expect_error("aliases:\n  lb.example.net.: {addresses: [192.0.2.1], age: 1e300h}\n", 2, "age", "duration");
  expect_error("aliases:\n  lb.example.net.: {addresses: [192.0.2.1, 192.0.2.1]}\n", 2, "addresses[1]", "twice");
  expect_error("aliases:\n  lb.example.net.: [192.0.2.1]\n", 2, "aliases.lb.example.net.", "expected a mapping");
}

} // namespace
} // namespace gtmesh::test
