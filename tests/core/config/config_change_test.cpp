// load_config_change (core/config/loader/change.cpp): a change read in
// proportion to what changed must give the model a whole load of the new
// text gives, line numbers included, or leave the text to a whole load.

#include "core/config/config_loader.hpp"
#include "core/config/loader/loader.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/routing_plan.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

#include <random>

namespace gtmesh {
namespace config_change_test {

const std::string head = R"(# a comment line
cluster: {name: change}
datacenters:
  - {name: fra}
  - {name: iad}
services:
  - name: web
    backends: {fra: ["10.0.0.1:80"], iad: ["10.0.0.2:80"]}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
)";

// Sections after the zones: their lines move when a change adds lines.
const std::string tail = R"(  - name: example.net
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
profiles:
  - name: p
    method: weighted
    endpoints:
      - {name: e, kind: external, target: 192.0.2.4}
      - {name: f, kind: dc, dc: iad, service: web, answers: [192.0.2.5]}
)";

/// Record `i` in block style, one of five shapes.
std::string record_text(int i, int variant = 0) {
  const std::string name = "r" + std::to_string(i);
  const std::string own = "10." + std::to_string(i / 250) + "." + std::to_string(i % 250) + "." +
                          std::to_string(1 + variant);
  switch (i % 5) {
    case 0:
      return "      - name: " + name + "\n        type: A\n        answers: [192.0.2." + std::to_string(i % 7) +
             ", " + own + "]\n";
    case 1:
      return "      - name: " + name + "\n        type: A\n        dc:\n          source: service\n"
             "          service: web\n          metric: healthyBackends\n          answers:\n"
             "            iad: [{address: " + own + ", weight: 3}]\n            fra: [192.0.2.1]\n"
             "          fail_safe: [192.0.2.1]\n";
    case 2:
      return "      - name: " + name + "\n        type: A\n        static:\n"
             "          rules: [{subnet: 10.0.0.0/8, dc: fra}, {dc: iad}]\n"
             "          answers: {fra: [" + own + "], iad: [192.0.2.2]}\n";
    case 3:
      return "      - {name: " + name + ", type: A, ttl: " + std::to_string(30 + variant) + ", profile: p}\n";
    default:
      return "      - name: " + name + "\n        type: TXT\n        answers: [\"t" + std::to_string(i % 3 + variant) +
             "\"]\n";
  }
}

std::string config_text(const std::vector<std::string>& records) {
  std::string y = head;
  for (const auto& r : records)
    y += r;
  return y + tail;
}

/// Everything the model says of its records and the elements with lines,
/// one line each: two models are alike when these are equal.
std::vector<std::string> describe(const config& c) {
  std::vector<std::string> out;
  auto at = [](const config_location& w) { return "@" + std::to_string(w.line) + ":" + std::to_string(w.column); };
  auto answers = [&](std::string& line, const std::string& tag, answer_span s) {
    for (const auto& item : c.answers_of(s))
      line += " " + tag + "=" + c.value_of(item).text() + "/w" + std::to_string(item.weight);
  };
  for (const auto& p : c.profiles) {
    out.push_back("profile " + p.name + at(p.where));
    for (const auto& e : p.endpoints)
      out.push_back("endpoint " + e.name + at(e.where));
  }
  for (const auto& d : c.datacenters)
    out.push_back("dc " + d.name + at(d.where));
  for (const auto& s : c.services)
    out.push_back("service " + s.name + at(s.where));
  for (const auto& z : c.zones) {
    out.push_back("zone " + z.name + at(z.where));
    for (const auto& r : z.records) {
      std::string line = r.name + " " + std::string(dns::to_string(r.type)) + " ttl" + std::to_string(r.ttl) +
                         " mode" + std::to_string(static_cast<int>(r.mode)) + at(r.where) + " profile=" + r.profile;
      answers(line, "plain", r.plain);
      if (r.dc) {
        for (const auto& d : r.dc->answers)
          answers(line, c.datacenters[d.dc].name, d.answers);
        answers(line, "fail_safe", r.dc->fail_safe);
        line += " select=" + r.dc->ranking->select.service + "/" +
                std::to_string(static_cast<int>(r.dc->ranking->select.metric));
      }
      if (r.static_rules) {
        for (const auto& rule : r.static_rules->rules)
          line += " rule:" + rule.dc + "/" + std::to_string(rule.subnets.size());
        for (const auto& d : r.static_rules->answers)
          answers(line, "static-" + c.datacenters[d.dc].name, d.answers);
      }
      out.push_back(line);
    }
  }
  return out;
}

load_result whole(const std::string& text) {
  return load_config_text(text, "change.yaml", routing_methods());
}

std::optional<load_result> change(const load_result& base, const std::string& base_text, const std::string& text) {
  return load_config_change(*base.cfg, base_text, text, "change.yaml", routing_methods());
}

/// `edited` taken from `before` in proportion: the model equals the whole
/// load's and compiles.
void expect_taken_like_whole(const std::string& before, const std::string& edited, const std::string& what) {
  const load_result base = whole(before);
  ASSERT_TRUE(base.ok()) << base.report();
  const load_result full = whole(edited);
  ASSERT_TRUE(full.ok()) << what << ": " << full.report();
  auto changed = change(base, before, edited);
  ASSERT_TRUE(changed) << what << ": not taken";
  ASSERT_TRUE(changed->ok());
  EXPECT_EQ(describe(*changed->cfg), describe(*full.cfg)) << what;
  EXPECT_TRUE(compile_plan(changed->cfg, 2).plan) << what;
}

/// `edited` refused in proportion with exactly the whole load's errors and
/// warnings (file, line, column, field, message; in its order).
void expect_refused_like_whole(const load_result& base, const std::string& before, const std::string& edited,
                               const std::string& what) {
  const load_result full = whole(edited);
  ASSERT_FALSE(full.ok()) << what;
  auto changed = change(base, before, edited);
  ASSERT_TRUE(changed) << what << ": not taken";
  EXPECT_FALSE(changed->ok()) << what;
  EXPECT_EQ(changed->report(), full.report()) << what;
}

std::vector<std::string> records_of(int n) {
  std::vector<std::string> rs;
  for (int i = 0; i < n; ++i)
    rs.push_back(record_text(i));
  return rs;
}

TEST(config_change, one_record_edited_inserted_appended_or_removed_is_read_alone_and_gives_the_whole_loads_model) {
  const std::vector<std::string> rs = records_of(40);
  const std::string before = config_text(rs);
  for (int i : {0, 1, 2, 3, 4, 17, 39}) {
    auto edited = rs;
    edited[i] = record_text(i, 1); // one line changed, no line added
    expect_taken_like_whole(before, config_text(edited), "record " + std::to_string(i) + " edited");
    edited = rs;
    edited[i] = record_text(i + 1, 1); // another shape, under its own name: lines added or removed
    const std::string other = "name: r" + std::to_string(i + 1);
    edited[i].replace(edited[i].find(other), other.size(), "name: r" + std::to_string(i));
    expect_taken_like_whole(before, config_text(edited), "record " + std::to_string(i) + " reshaped");
    edited = rs;
    edited.erase(edited.begin() + i);
    expect_taken_like_whole(before, config_text(edited), "record " + std::to_string(i) + " removed");
    edited = rs;
    edited.insert(edited.begin() + i, record_text(100 + i));
    expect_taken_like_whole(before, config_text(edited), "a record inserted before " + std::to_string(i));
  }
  // A name the zone has already, with another type: the names are checked
  // again as a whole load checks them.
  auto beside = rs;
  beside.insert(beside.begin() + 5, "      - {name: r0, type: MX, answers: [{preference: 10, exchange: mx.example.org.}]}\n");
  expect_taken_like_whole(before, config_text(beside), "an MX beside r0's A");
  auto appended = rs;
  appended.push_back(record_text(41));
  appended.push_back(record_text(42));
  expect_taken_like_whole(before, config_text(appended), "two records appended");
  // Answers of the records replaced are not kept forever: chained changes
  // go on giving the whole load's model.
  std::string text = before;
  load_result model = whole(text);
  auto current = rs;
  for (int round = 0; round < 30; ++round) {
    current[round % 40] = record_text(round % 40, round % 4 + 1);
    const std::string next = config_text(current);
    auto changed = change(model, text, next);
    const load_result full = whole(next);
    ASSERT_TRUE(full.ok()) << full.report();
    if (changed) // a whole load packs the arena now and then
      EXPECT_EQ(describe(*changed->cfg), describe(*full.cfg)) << "round " << round;
    model = changed ? std::move(*changed) : full;
    text = next;
  }
}

TEST(config_change, what_it_does_not_take_is_left_to_the_whole_load) {
  const std::vector<std::string> rs = records_of(20);
  const std::string before = config_text(rs);
  const load_result base = whole(before);
  ASSERT_TRUE(base.ok()) << base.report();
  auto not_taken = [&](const std::string& edited, const std::string& what) {
    EXPECT_FALSE(change(base, before, edited)) << what;
  };
  std::string t = before;
  not_taken(t, "the same text");
  t = before;
  t.replace(t.find("name: change"), 12, "name: other");
  not_taken(t, "the cluster section");
  t = before;
  t.replace(t.find("primary: ns1"), 12, "primary: ns2");
  not_taken(t, "a zone's SOA");
  t = before;
  t.replace(t.find("target: 192.0.2.4"), 17, "target: 192.0.2.9");
  not_taken(t, "a profile");
  // Errors (a typo, an unknown profile, a duplicate name) are refused
  // here, in the whole load's words: record `i` replaced by `lines`.
  auto refused_with = [&](size_t i, const std::string& lines, const std::string& what) {
    auto bad = rs;
    bad[i] = lines;
    expect_refused_like_whole(base, before, config_text(bad), what);
  };
  refused_with(6, "      - name: r6\n        tpye: A\n        answers: [192.0.2.1]\n", "a misspelt key");
  refused_with(3, "      - {name: r3, type: A, profile: nowhere}\n", "an unknown profile");
  refused_with(7, record_text(5), "a duplicate record");
  auto edited = rs;
  edited.push_back("      - {name: r15, type: A, answers: [192.0.2.1]}\n");
  expect_refused_like_whole(base, before, config_text(edited), "a duplicate record appended, apart from its twin");
  refused_with(9, "      - {type: A, answers: [192.0.2.1]}\n", "a record without a name (its field is its index)");
  // What the records read say among themselves beside a typo: a name twice,
  // a CNAME at the apex.
  refused_with(10, "      - {name: n1, type: A, answers: [192.0.2.1]}\n      - {name: n1, type: A, ttl: x, answers: [192.0.2.2]}\n",
               "a duplicate among the records read, and a typo");
  refused_with(10, "      - {name: '@', type: CNAME, answers: [x.example.org.]}\n      - {name: n1, type: A, ttl: x, answers: [192.0.2.2]}\n",
               "a CNAME at the apex, and a typo");
  edited = rs;
  edited.push_back("      - {name: r1, type: CNAME, answers: [x.example.org.]}\n");
  not_taken(config_text(edited), "a CNAME beside other data (a warning)");
  EXPECT_FALSE(whole(config_text(edited)).warnings.empty());
  // Structure: less indented, an anchor, an ALIAS record.
  edited = rs;
  edited[8] = "    - {name: r8, type: A, answers: [192.0.2.1]}\n";
  not_taken(config_text(edited), "an item at another indentation");
  edited = rs;
  edited[8] = "      - {name: r8, type: A, answers: &x [192.0.2.1]}\n";
  not_taken(config_text(edited), "an anchor");
  edited = rs;
  edited[8] = "      - {name: r8, type: ALIAS, target: www.example.org.}\n";
  not_taken(config_text(edited), "an ALIAS record");
  edited = rs;
  edited[8] = "      - name: r8\n        type: TXT\n        answers: [\"unclosed\n";
  not_taken(config_text(edited), "an unclosed quote");
  // A base that warned: its model may lack records its text has.
  const std::string warned = head + "      - {name: c, type: CNAME, answers: [x.example.org.]}\n"
                                    "      - {name: c, type: TXT, answers: [\"t\"]}\n" + tail;
  const load_result with_warning = whole(warned);
  ASSERT_TRUE(with_warning.ok()) << with_warning.report();
  ASSERT_FALSE(with_warning.warnings.empty());
  std::string w2 = warned;
  w2.replace(w2.find("\"t\""), 3, "\"u\"");
  EXPECT_FALSE(load_config_change(*with_warning.cfg, warned, w2, "change.yaml", routing_methods()));
}

TEST(config_change, another_file_name_is_taken_unless_a_path_in_the_config_is_relative) {
  const std::vector<std::string> rs = records_of(20);
  const std::string before = config_text(rs);
  auto edited = rs;
  edited[4] = record_text(4, 1);
  const std::string after = config_text(edited);
  const load_result base = whole(before); // "change.yaml"
  ASSERT_TRUE(base.ok()) << base.report();
  auto renamed = load_config_change(*base.cfg, before, after, "v3.yaml", routing_methods());
  ASSERT_TRUE(renamed);
  EXPECT_EQ(renamed->cfg->file, "v3.yaml");
  EXPECT_EQ(describe(*renamed->cfg), describe(*whole(after).cfg));

  // A relative path is resolved against the file's folder: another name
  // (here another folder) may name another file.
  const std::string geo = "geo: {database: tests/data/test.mmdb}\n";
  const std::string in_source = test::source_dir() + "/change.yaml";
  const load_result relative = load_config_text(geo + before, in_source, routing_methods());
  ASSERT_TRUE(relative.ok()) << relative.report();
  ASSERT_TRUE(relative.cfg->relative_paths);
  EXPECT_TRUE(load_config_change(*relative.cfg, geo + before, geo + after, in_source, routing_methods()));
  EXPECT_FALSE(load_config_change(*relative.cfg, geo + before, geo + after, "/elsewhere/change.yaml", routing_methods()));
}

/// `edited` from `before`: not taken, or taken with the whole load's model.
void expect_like_whole_or_not_taken(const std::string& before, const std::string& edited, const std::string& what,
                                    bool must_leave = false) {
  const load_result base = whole(before);
  ASSERT_TRUE(base.ok()) << what << ": " << base.report();
  auto changed = change(base, before, edited);
  if (must_leave)
    EXPECT_FALSE(changed) << what;
  if (!changed)
    return;
  const load_result full = whole(edited);
  ASSERT_TRUE(full.ok()) << what << ": taken, but the whole load refuses it: " << full.report();
  EXPECT_EQ(describe(*changed->cfg), describe(*full.cfg)) << what;
}

// What a review found taken wrongly, and what is near it.
TEST(config_change, aliases_other_line_breaks_and_block_scalars_are_read_as_a_whole_load_reads_them) {
  // Two zones share one records list: the change is in both.
  const std::string shared = R"(datacenters:
  - {name: fra}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records: &shared
      - {name: www, type: A, answers: [192.0.2.1]}
      - {name: ns1, type: A, answers: [192.0.2.53]}
  - name: example.net
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records: *shared
)";
  std::string edited = shared;
  edited.replace(edited.find("192.0.2.1]"), 9, "192.0.2.2");
  expect_like_whole_or_not_taken(shared, edited, "records aliased by another zone", true);
  // Line breaks libyaml counts and "\n" does not (U+2028, NEL, CR).
  for (const std::string brk : {"\xe2\x80\xa8", "\xc2\x85", "\r"}) {
    std::vector<std::string> rs = records_of(6);
    std::string before = config_text(rs);
    before.insert(0, "# note" + brk + "\n");
    std::string after = before;
    after.replace(after.find("name: r2"), 8, "name: q2");
    expect_like_whole_or_not_taken(before, after, "a line break other than \\n above", true);
  }
  // A block scalar ends the record before the change: a blank or comment
  // line inserted before the next item is its content.
  for (const std::string style : {"|", "|+", ">+"}) {
    const std::string before = head + "      - name: t\n        type: TXT\n        answers:\n          - " + style +
                               "\n            v=spf1 -all\n      - {name: u, type: A, answers: [192.0.2.1]}\n" + tail;
    for (const std::string inserted : {"            # note\n", "\n", "              \n"}) {
      std::string after = before;
      after.insert(after.find("      - {name: u"), inserted);
      expect_like_whole_or_not_taken(before, after, "block scalar " + style + " before an inserted line");
      std::string with_record = before;
      with_record.insert(with_record.find("      - {name: u"),
                         inserted + "      - {name: v, type: A, answers: [192.0.2.9]}\n");
      expect_like_whole_or_not_taken(before, with_record, "block scalar " + style + " before a new record");
    }
  }
}

TEST(config_change, random_edits_give_the_whole_loads_model_or_are_left_to_it) {
  // Items: a record (its number, its variant) or, as -1, a comment between
  // records.
  std::mt19937 rng(42);
  std::vector<std::pair<int, int>> items;
  for (int i = 0; i < 60; ++i)
    items.emplace_back(i, 0);
  auto text_of = [](const std::vector<std::pair<int, int>>& list) {
    std::vector<std::string> rs;
    for (auto [id, variant] : list)
      rs.push_back(id < 0 ? "\n      # note\n\n" : record_text(id, variant));
    return config_text(rs);
  };
  std::string text = text_of(items);
  load_result model = whole(text);
  ASSERT_TRUE(model.ok()) << model.report();
  int taken = 0, next_id = 1000;
  for (int round = 0; round < 120; ++round) {
    auto edited = items;
    const size_t i = rng() % edited.size();
    switch (rng() % 6) {
      case 0:
        if (edited[i].first >= 0)
          edited[i].second = static_cast<int>(rng() % 5);
        break;
      case 1:
        edited.erase(edited.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      case 2:
        edited.insert(edited.begin() + static_cast<std::ptrdiff_t>(i), {next_id++, 0});
        break;
      case 3:
        edited.emplace_back(next_id++, 0);
        break;
      case 4: // two records at once, apart
        edited[i] = {next_id++, 0};
        edited[(i + 7) % edited.size()] = {next_id++, 1};
        break;
      default:
        edited.insert(edited.begin() + static_cast<std::ptrdiff_t>(i), {-1, 0});
    }
    if (edited.size() < 4)
      continue;
    const std::string next = text_of(edited);
    const load_result full = whole(next);
    auto changed = change(model, text, next);
    if (!full.ok()) {
      if (changed) {
        EXPECT_EQ(changed->report(), full.report()) << "round " << round;
      }
      continue;
    }
    if (changed) {
      ++taken;
      ASSERT_EQ(describe(*changed->cfg), describe(*full.cfg)) << "round " << round;
    }
    model = changed ? std::move(*changed) : full;
    text = next;
    items = edited;
  }
  EXPECT_GT(taken, 80) << "most of these edits touch records alone";
}

TEST(config_change, a_typo_in_a_record_is_refused_in_proportion_in_the_whole_loads_words) {
  // One mistake at a time in one record of 80 (every shape), chained on a
  // clean base: the change is refused with the errors a whole load of the
  // same text gives, byte for byte; a correct edit still gives its model.
  std::mt19937 rng(7);
  const std::vector<std::string> rs = records_of(80);
  const std::string before = config_text(rs);
  const load_result base = whole(before);
  ASSERT_TRUE(base.ok()) << base.report();
  const std::vector<std::pair<std::string, std::string>> mistakes = {
    {"type: A", "tpye: A"},          {"answers:", "answrs:"},       {"type: A", "type: AA"},
    {"192.0.2.", "192.0.2.9"},       {"service: web", "service: wbe"}, {"weight: 3", "weight: -3"},
    {"iad:", "ams:"},                {"profile: p", "profile: q"},  {"metric: healthyBackends", "metric: healthy"},
    {"subnet: 10.0.0.0/8", "subnet: 10.0.0.0/88"}, {"type: TXT", "type: TXT\n        ttl: x"},
    {"name: r", "name: r1"},         {"fail_safe:", "fail_safe: []\n          x:"},
  };
  int refused = 0, rounds = 0;
  for (int round = 0; round < 200; ++round) {
    const size_t i = rng() % rs.size();
    std::vector<size_t> fits; // the mistakes this record's shape can have
    for (size_t m = 0; m < mistakes.size(); ++m)
      if (rs[i].find(mistakes[m].first) != std::string::npos)
        fits.push_back(m);
    if (fits.empty())
      continue;
    const auto& [from, to] = mistakes[fits[rng() % fits.size()]];
    std::string bad = rs[i];
    bad.replace(bad.find(from), from.size(), to);
    auto edited = rs;
    edited[i] = bad;
    const std::string text = config_text(edited);
    const load_result full = whole(text);
    ++rounds;
    auto changed = change(base, before, text);
    if (full.ok()) { // "name: r1..." may still name a free record
      if (changed) {
        EXPECT_EQ(describe(*changed->cfg), describe(*full.cfg)) << "round " << round;
      }
      continue;
    }
    ASSERT_TRUE(changed) << "round " << round << ": " << to << " in r" << i << " left to the whole load";
    ASSERT_FALSE(changed->ok()) << "round " << round;
    ASSERT_EQ(changed->report(), full.report()) << "round " << round << ": " << to << " in r" << i;
    ++refused;
  }
  EXPECT_GT(rounds, 150);
  EXPECT_GT(refused, rounds / 2);
}

TEST(config_change, many_records_read_at_once_are_read_as_the_whole_load_reads_them) {
  // A change of many records (a push that inserts 100,000) is read twice:
  // first for errors, then into the model. The first read must leave the
  // YAML nodes it read in place (a whole load gives each 1,024 records'
  // nodes back as it goes, whole pages of them: here every 2 records, and
  // 600 records fill pages enough).
  const size_t was = config_loading::release_nodes_every.exchange(2);
  const std::vector<std::string> rs = records_of(3000); // the part read under a quarter of the text
  const std::string before = config_text(rs);
  std::vector<std::string> more = rs;
  for (int i = 5000; i < 5600; ++i)
    more.insert(more.begin() + 1, record_text(i));
  expect_taken_like_whole(before, config_text(more), "600 records inserted at once");
  more[5] = "      - {name: r999, type: A, ttl: x, answers: [192.0.2.1]}\n";
  const load_result base = whole(before);
  expect_refused_like_whole(base, before, config_text(more), "600 records inserted at once, one with a typo");
  config_loading::release_nodes_every = was;
}

} // namespace config_change_test
} // namespace gtmesh
