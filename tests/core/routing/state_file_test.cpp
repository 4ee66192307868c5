// The measurement state file parser is total: every malformed state is an
// error naming file, line and field, never an exception, and no value it
// accepts is a NaN, an infinity or an overflowed time. Each case below is a
// class of input that tests/fuzz/state_file_fuzz.cpp (or a review of what it
// runs) found escaping as an exception or undefined behaviour.

#include "tests/core/routing/routing_fixture.hpp"

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

} // namespace
} // namespace gtmesh::test
