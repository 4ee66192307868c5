// The config as JSON and back (core/config/config_json), the objects the API
// edits (core/config/config_objects) and the decider's API logic without the
// actor (core/decider/config_api).

#include "core/config/config_json.hpp"
#include "core/config/config_loader.hpp"
#include "core/config/config_objects.hpp"
#include "core/decider/config_api.hpp"
#include "core/routing/all_methods.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <fstream>
#include <sstream>

using namespace gtmesh;
using config_json::json;

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json parse(const std::string& text) {
  std::string error;
  auto j = config_json::parse_yaml(text, error);
  EXPECT_TRUE(j) << error;
  return j ? *j : json();
}

const std::string small = R"(datacenters:
  - {name: fra}
  - {name: iad}
zones:
  - name: example.com
    soa: {primary: ns1.example.com., admin: hostmaster.example.com.}
    ns: [ns1.example.com.]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
      - {name: www, type: A, ttl: 30, profile: web}
      - {name: "@", type: TXT, answers: ["v=spf1 -all"]}
profiles:
  - name: web
    method: weighted
    endpoints:
      - {name: a, kind: external, target: 192.0.2.1, weight: 3}
      - {name: b, kind: external, target: 192.0.2.2}
)";

} // namespace

TEST(config_json, scalars_are_typed_only_when_their_text_is_the_json_text) {
  json j = parse("a: 30\nb: 30s\nc: 010\nd: 0.5\ne: true\nf: yes\ng: \"200-399\"\nh: ~\ni: -4\nj: 1e3\n");
  EXPECT_EQ(j["a"], 30);
  EXPECT_EQ(j["b"], "30s");
  EXPECT_EQ(j["c"], "010"); // not the number 10: the text would change
  EXPECT_EQ(j["d"], 0.5);
  EXPECT_EQ(j["e"], true);
  EXPECT_EQ(j["f"], "yes");
  EXPECT_EQ(j["g"], "200-399");
  EXPECT_TRUE(j["h"].is_null());
  EXPECT_EQ(j["i"], -4);
  EXPECT_EQ(j["j"], "1e3"); // JSON writes 1000.0: kept as text
}

TEST(config_json, strings_that_yaml_would_read_otherwise_are_quoted_and_read_back_the_same) {
  json j = json::object();
  for (const char* s : {"", "yes", "No", "010", "30", "true", "null", "~", "*.example.com", "a: b", "x #y", "#z",
                        "- a", "[x]", "{y}", "a,b", " lead", "trail ", "@at", "ünï", "line\nbreak", "tab\there",
                        "10 mx.example.com.", "v=spf1 -all", "2001:db8::1", "::1", "a:", "&anchor", "!tag", "%p",
                        "'q'", "\"dq\"", "`b`", "|", ">", "?", "-", "a:b", "key: value", "del\x7f", "nel\u0085x",
                        "a \u2028 b", "c1\u0090", "bom\ufeff", "nul\x01", "back\\slash", "emoji \U0001F600"})
    j[std::string("k") + std::to_string(j.size())] = s;
  std::string text = config_json::to_yaml(j).text;
  // The loader reads text: each value must read back as the same text (a
  // quoted "30" is the number 30 to JSON readers, and 30 to the loader).
  json back = parse(text);
  ASSERT_EQ(back.size(), j.size()) << text;
  for (const auto& [k, v] : j.items())
    EXPECT_EQ(back[k].is_string() ? back[k].get<std::string>() : back[k].dump(), v.get<std::string>()) << k << "\n" << text;
}

TEST(config_json, keys_longer_than_yaml_allows_implicitly_are_written_as_explicit_keys) {
  // libyaml refuses "key: value" with a key over 1024 characters; a key
  // that long is legal in a flow mapping and in JSON, so the canonical text
  // must still read back (fuzz.config_json found this).
  const std::string long_key(1500, 'k');
  const std::string long_quoted = "a: " + std::string(1200, '[');
  json j = json::object();
  j[long_key] = "scalar";
  j["short"] = json::object({{long_key, 1}, {"x", "y"}});          // flow-eligible: must not be one line
  j["list"] = json::array({json::object({{long_quoted, json::array({1, 2})}, {"b", 2}}),
                           json::object({{"a", 1}, {long_key, json::object({{"deep", true}})}})});
  j[long_quoted] = json::array({json::object({{long_key, "v"}})});
  auto emitted = config_json::to_yaml(j);
  json back = parse(emitted.text);
  EXPECT_EQ(back, j) << emitted.text;
  EXPECT_NE(emitted.text.find("? "), std::string::npos);
  EXPECT_EQ(config_json::to_yaml(back).text, emitted.text); // a fixpoint
  // Every line still names a pointer that exists.
  for (const auto& p : emitted.pointer_of_line)
    EXPECT_TRUE(p.empty() || back.contains(json::json_pointer(p))) << p;
}

TEST(config_json, every_shipped_example_reads_back_the_same_and_still_loads) {
  std::vector<std::filesystem::path> files{std::filesystem::path(GTMESH_TEST_SOURCE_DIR) / "configs/full.yaml"};
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(GTMESH_TEST_SOURCE_DIR) / "configs/examples"))
    if (e.path().extension() == ".yaml")
      files.push_back(e.path());
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    json j = parse(read(f));
    auto emitted = config_json::to_yaml(j);
    EXPECT_EQ(parse(emitted.text), j) << emitted.text;
    // Read as if in the original's place, so relative paths (geo.database) hold.
    auto original = load_config_file(f.string(), routing_methods());
    auto canonical = load_config_text(emitted.text, f.string(), routing_methods());
    ASSERT_TRUE(original.ok()) << original.report();
    EXPECT_TRUE(canonical.ok()) << canonical.report() << emitted.text;
    // Every line of the text says what it holds.
    ASSERT_EQ(emitted.pointer_of_line.size(), static_cast<size_t>(std::count(emitted.text.begin(), emitted.text.end(), '\n')));
    for (size_t i = 0; i < emitted.pointer_of_line.size(); ++i)
      EXPECT_NO_THROW(j.at(json::json_pointer(emitted.pointer_of_line[i]))) << "line " << i + 1;
  }
}

TEST(config_objects, paths_name_one_object_or_a_collection) {
  std::string error;
  auto r = config_objects::parse_path("zones/example.com/records/WWW/a", error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->kind, "records");
  EXPECT_EQ(r->zone, "example.com");
  EXPECT_EQ(r->name, "www");
  EXPECT_EQ(r->type, "A");
  EXPECT_EQ(r->path(), "zones/example.com/records/www/A");
  r = config_objects::parse_path("/profiles/", error);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->is_collection());
  for (const char* bad : {"", "things/x", "profiles/a/b", "zones/z/records/www", "zones/z/other", "profiles//x"}) {
    error.clear();
    EXPECT_FALSE(config_objects::parse_path(bad, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(config_objects, get_put_and_delete_change_only_their_object) {
  json doc = parse(small);
  std::string error;
  auto ref = *config_objects::parse_path("zones/example.com/records/www/A", error);
  auto got = config_objects::get(doc, ref, error);
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)["profile"], "web");
  // The apex by "@" and by its absolute name.
  EXPECT_TRUE(config_objects::get(doc, *config_objects::parse_path("zones/example.com/records/@/TXT", error), error));
  EXPECT_EQ(config_objects::relative_record_name("example.com.", "example.com"), "@");
  EXPECT_EQ(config_objects::relative_record_name("WWW.Example.com.", "example.com"), "www");

  // Replace in place: the list keeps its order.
  auto r = config_objects::apply(doc, {ref, json{{"ttl", 60}, {"answers", {"192.0.2.9"}}}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.pointer, "/zones/0/records/1");
  EXPECT_EQ(doc["zones"][0]["records"][1]["name"], "www");
  EXPECT_EQ(doc["zones"][0]["records"][1]["ttl"], 60);
  EXPECT_FALSE(doc["zones"][0]["records"][1].contains("profile"));
  // Create: at the end.
  auto api = *config_objects::parse_path("zones/example.com/records/api/AAAA", error);
  r = config_objects::apply(doc, {api, json{{"answers", {"2001:db8::1"}}}});
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(doc["zones"][0]["records"].size(), 4u);
  EXPECT_EQ(doc["zones"][0]["records"][3]["type"], "AAAA");
  // A body naming another object is refused, the document unchanged.
  json before = doc;
  r = config_objects::apply(doc, {api, json{{"name", "other"}, {"answers", {"2001:db8::1"}}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(doc, before);
  r = config_objects::apply(doc, {api, json::array()});
  EXPECT_EQ(r.status, 400);
  // A record of a zone that is not there.
  r = config_objects::apply(doc, {*config_objects::parse_path("zones/nope.org/records/x/A", error), json::object()});
  EXPECT_EQ(r.status, 404);
  // A zone replaced without records keeps them; with records, takes those.
  auto zone = *config_objects::parse_path("zones/example.com", error);
  r = config_objects::apply(doc, {zone, json{{"soa", doc["zones"][0]["soa"]}, {"ns", {"ns9.example.com."}}}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(doc["zones"][0]["records"].size(), 4u);
  EXPECT_EQ(doc["zones"][0]["ns"][0], "ns9.example.com.");
  // Delete, and a second delete is a 404.
  EXPECT_EQ(config_objects::apply(doc, {api, std::nullopt}).status, 200);
  EXPECT_EQ(config_objects::apply(doc, {api, std::nullopt}).status, 404);
  EXPECT_EQ(doc["zones"][0]["records"].size(), 3u);
  // A collection is read, never written.
  auto profiles = *config_objects::parse_path("profiles", error);
  EXPECT_EQ(config_objects::get(doc, profiles, error)->size(), 1u);
  EXPECT_EQ(config_objects::apply(doc, {profiles, json::object()}).status, 405);
  // The zones list leaves the records out and counts them.
  auto zones = config_objects::get(doc, *config_objects::parse_path("zones", error), error);
  EXPECT_FALSE((*zones)[0].contains("records"));
  EXPECT_EQ((*zones)[0]["record_count"], 3);
}

TEST(config_objects, a_partial_config_is_one_edit_per_object) {
  std::string error;
  auto edits = config_objects::edits_of(parse(R"(profiles:
  - {name: p1, method: weighted, endpoints: []}
zones:
  - name: example.com
    records:
      - {name: www, type: a, answers: [192.0.2.1]}
      - {name: www.example.com., type: AAAA, answers: ["2001:db8::1"]}
  - name: other.org
    soa: {primary: ns.other.org., admin: h.other.org.}
    ns: [ns.other.org.]
)"), error);
  ASSERT_EQ(edits.size(), 4u) << error;
  EXPECT_EQ(edits[0].ref.path(), "profiles/p1");
  EXPECT_EQ(edits[1].ref.path(), "zones/example.com/records/www/A");
  EXPECT_EQ(edits[2].ref.path(), "zones/example.com/records/www/AAAA");
  EXPECT_EQ(edits[3].ref.path(), "zones/other.org");
  for (const char* bad : {"geo: {database: x}\n", "profiles: {name: x}\n", "profiles:\n  - {method: weighted}\n", "[]"}) {
    error.clear();
    EXPECT_TRUE(config_objects::edits_of(parse(bad), error).empty()) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(config_api, a_loader_error_is_told_as_a_pointer_into_the_request) {
  std::string error;
  auto edits = decider::config_api::edits_of(
    "PUT", "profiles/web",
    R"({"method":"weighted","endpoints":[{"name":"a","kind":"external","target":"192.0.2.1","weight":"heavy"}]})",
    error);
  ASSERT_EQ(edits.size(), 1u);
  auto p = decider::config_api::prepare(parse(small), 7, edits);
  ASSERT_EQ(p.status, 200) << p.reply;
  auto loaded = load_config_text(p.yaml, decider::config_api::api_file, routing_methods());
  ASSERT_FALSE(loaded.ok());
  std::vector<std::string> errors;
  for (const auto& e : loaded.errors)
    errors.push_back(e.to_string());
  json body = decider::config_api::explain_errors(p, errors);
  ASSERT_EQ(body["errors"].size(), 1u) << body.dump(2);
  EXPECT_EQ(body["errors"][0]["object"], "profiles/web");
  EXPECT_EQ(body["errors"][0]["pointer"], "/endpoints/0/weight");
  EXPECT_EQ(body["errors"][0]["config_pointer"], "/profiles/0/endpoints/0/weight");

  // Deleting what a record uses: the error is outside the request, in the config.
  p = decider::config_api::prepare(parse(small), 7, decider::config_api::edits_of("DELETE", "profiles/web", "", error));
  loaded = load_config_text(p.yaml, decider::config_api::api_file, routing_methods());
  ASSERT_FALSE(loaded.ok());
  errors.clear();
  for (const auto& e : loaded.errors)
    errors.push_back(e.to_string());
  body = decider::config_api::explain_errors(p, errors);
  EXPECT_FALSE(body["errors"][0].contains("pointer"));
  EXPECT_EQ(body["errors"][0]["config_pointer"], "/zones/0/records/1/profile");
}

TEST(config_api, an_export_names_its_version_and_push_reads_it_back) {
  std::string text = decider::config_api::export_yaml(parse(small), 42);
  EXPECT_EQ(decider::config_api::exported_version(text), 42u);
  EXPECT_EQ(decider::config_api::exported_version(small), 0u);
  EXPECT_TRUE(load_config_text(text, "x.yaml", routing_methods()).ok());
  EXPECT_EQ(parse(text), parse(small));
}

namespace {

const std::string commented = R"(# the operator's file: comments and layout stay
datacenters:
  - {name: fra}
  - {name: iad}
zones:
  - name: Example.com.
    soa: {primary: ns1.example.com., admin: hostmaster.example.com.}
    ns: [ns1.example.com.]
    records:
      # name servers first
      - {name: ns1, type: A, answers: [192.0.2.53]}

      - name: www
        type: A
        ttl: 30
        profile: web   # weighted
      - name: "@"
        type: TXT
        answers:
          - |
            v=spf1 -all
      # the mail record
      - {name: mail, type: MX, answers: [{preference: 10, exchange: mx.example.org.}]}
  - name: example.net
    soa: {primary: ns1.example.net., admin: hostmaster.example.net.}
    ns: [ns1.example.net.]
    records:
      - {name: ns1, type: A,
         answers: [192.0.2.54]}
profiles:
  - name: web
    method: weighted
    endpoints:
      - {name: a, kind: external, target: 192.0.2.1, weight: 3}
      - {name: b, kind: external, target: 192.0.2.2}
# the end
)";

} // namespace

TEST(config_api, a_record_change_edits_only_its_lines_and_reads_as_the_whole_configs_edit) {
  namespace api = decider::config_api;
  std::mt19937 rng(7);
  std::string text = commented;
  int taken = 0, tried = 0;
  const std::vector<std::string> names = {"ns1", "www", "@", "mail", "new1", "new2", "a.b"};
  const std::vector<std::string> types = {"A", "TXT", "MX", "AAAA"};
  for (int round = 0; round < 150; ++round) {
    const auto loaded = load_config_text(text, "pushed.yaml", routing_methods());
    ASSERT_TRUE(loaded.ok()) << loaded.report() << "\n" << text;
    const json doc = parse(text);
    const std::string zone = rng() % 4 ? "example.com" : "example.net";
    const std::string name = names[rng() % names.size()];
    const std::string type = types[rng() % types.size()];
    std::string body;
    switch (type[0]) {
      case 'A': body = type == "A" ? R"({"ttl": )" + std::to_string(rng() % 500 + 1) + R"(, "answers": ["192.0.2.)" +
                                       std::to_string(rng() % 200) + R"("]})"
                                   : R"({"answers": ["2001:db8::)" + std::to_string(rng() % 200) + R"("]})";
        break;
      case 'T': body = R"({"answers": ["line one\nline two", "x: y # not a comment"]})"; break;
      default: body = R"({"answers": [{"preference": )" + std::to_string(rng() % 50) + R"(, "exchange": "mx.example.org."}]})";
    }
    const bool del = rng() % 3 == 0;
    std::string error;
    auto edits = api::edits_of(del ? "DELETE" : "PUT", "zones/" + zone + "/records/" + name + "/" + type, body, error);
    ASSERT_EQ(edits.size(), 1u) << error;
    json expected = doc;
    const auto want = config_objects::apply(expected, edits[0]);
    auto c = api::change_record(&doc, *loaded.cfg, text, edits[0]);
    // Without the document (the first change after a push): the same
    // change, from the lines alone.
    auto alone = api::change_record(nullptr, *loaded.cfg, text, edits[0]);
    ++tried;
    ASSERT_EQ(alone.has_value(), c.has_value()) << "round " << round;
    if (!c) {
      // Only what the whole path refuses, or a zone it cannot take so.
      continue;
    }
    ++taken;
    EXPECT_EQ(alone->yaml, c->yaml) << round;
    EXPECT_EQ(alone->result.status, c->result.status) << round;
    EXPECT_EQ(alone->result.pointer, c->result.pointer) << round;
    EXPECT_EQ(alone->zone, c->zone) << round;
    EXPECT_EQ(alone->at, c->at) << round;
    EXPECT_EQ(alone->body, c->body) << round;
    EXPECT_EQ(c->result.status, want.status) << round;
    EXPECT_EQ(c->result.pointer, want.pointer) << round;
    EXPECT_EQ(parse(c->yaml), expected) << "round " << round << ":\n" << c->yaml;
    json carried = doc;
    api::apply_record_change(carried, *c);
    EXPECT_EQ(carried, expected) << round;
    // Lines outside the record stay as they were.
    EXPECT_NE(c->yaml.find("# the operator's file: comments and layout stay"), std::string::npos);
    EXPECT_NE(c->yaml.find("# the end"), std::string::npos);
    auto next = load_config_text(c->yaml, "pushed.yaml", routing_methods());
    if (next.ok()) // a duplicate name or a CNAME beside data: refused as a push would be
      text = c->yaml;
  }
  EXPECT_GT(taken, tried / 2) << taken << " of " << tried;
  EXPECT_NE(text.find("# the mail record"), std::string::npos);
}

TEST(config_api, a_record_change_leaves_to_the_whole_rewrite_what_it_cannot_read_alone) {
  namespace api = decider::config_api;
  std::string error;
  auto put = [&](const std::string& path) {
    auto e = api::edits_of("PUT", path, R"({"answers": ["192.0.2.9"]})", error);
    return e.at(0);
  };
  auto take = [&](const std::string& text, const config_objects::edit& e) {
    auto loaded = load_config_text(text, "pushed.yaml", routing_methods());
    EXPECT_TRUE(loaded.ok()) << loaded.report();
    if (!loaded.ok())
      return std::optional<api::record_change>();
    const json doc = parse(text);
    auto c = api::change_record(&doc, *loaded.cfg, text, e);
    // Taken alike without the document.
    auto alone = api::change_record(nullptr, *loaded.cfg, text, e);
    EXPECT_EQ(alone.has_value(), c.has_value());
    if (alone && c)
      EXPECT_EQ(alone->yaml, c->yaml);
    return c;
  };
  EXPECT_TRUE(take(commented, put("zones/example.com/records/www/A")));
  // A config with a catalog zone (generated last in the model, not in the
  // document): a record of another zone changes alike both ways.
  std::string with_catalog = commented;
  const std::string records_line = "    records:\n      # name servers first";
  with_catalog.replace(with_catalog.find(records_line), records_line.size(),
                       "    transfer: {allow: [127.0.0.1]}\n" + records_line);
  with_catalog += "catalog: {name: catalog.invalid., transfer: {allow: [127.0.0.1]}}\n";
  EXPECT_TRUE(take(with_catalog, put("zones/example.com/records/www/A"))) << "a config with a catalog zone";
  // An alias (the records may be another zone's too), records in flow
  // style, a zone that is not there, a record not there to delete.
  std::string aliased = commented;
  aliased.replace(aliased.find("answers: [192.0.2.53]"), 21, "answers: &ns [192.0.2.53]");
  aliased.replace(aliased.find("profile: web"), 12, "answers: *ns");
  EXPECT_FALSE(take(aliased, put("zones/example.com/records/www/A")));
  std::string flow = commented;
  flow.replace(flow.find("    records:\n      - {name: ns1, type: A,\n"), 41, "    records: [{name: ns1, type: A,\n");
  flow.replace(flow.find("answers: [192.0.2.54]}"), 22, "answers: [192.0.2.54]}]");
  EXPECT_FALSE(take(flow, put("zones/example.net/records/x/A")));
  EXPECT_FALSE(take(commented, put("zones/nowhere.org/records/x/A")));
  EXPECT_FALSE(take(commented, api::edits_of("DELETE", "zones/example.com/records/none/A", "", error).at(0)));
  // The zone's only record deleted: `records:` with nothing would read as null.
  EXPECT_FALSE(take(commented, api::edits_of("DELETE", "zones/example.net/records/ns1/A", "", error).at(0)));

  // What a review found: each taken only when the text reads as the whole
  // config's edit.
  auto taken_right = [&](const std::string& text, const config_objects::edit& e, const std::string& what) {
    auto c = take(text, e);
    if (!c)
      return false;
    json expected = parse(text);
    config_objects::apply(expected, e);
    EXPECT_EQ(parse(c->yaml), expected) << what << ":\n" << c->yaml;
    return true;
  };
  const std::string head = "datacenters:\n  - {name: fra}\nzones:\n  - name: example.com\n    soa: {primary: ns1.example.com., admin: h.example.com.}\n"
                           "    ns: [ns1.example.com.]\n    records:\n      - {name: ns1, type: A, answers: [192.0.2.53]}\n";
  // No newline after the last line (here a comment): a record appended must not join it.
  EXPECT_FALSE(taken_right(head + "      - {name: b, type: A, answers: [192.0.2.2]} # the last line",
                           put("zones/example.com/records/c/A"), "appended after a last line with no newline"));
  EXPECT_TRUE(taken_right(head + "      - {name: b, type: A, answers: [192.0.2.2]} # the last line\n",
                          put("zones/example.com/records/c/A"), "appended after a last line"));
  // A keep-chomped scalar before a deleted item: the blank lines left would join it.
  const std::string kept = head + "      - name: t\n        type: TXT\n        answers:\n          - |+\n"
                                  "            text\n      - {name: b, type: A, answers: [192.0.2.2]}\n\n\n"
                                  "      - {name: c, type: A, answers: [192.0.2.3]}\n";
  taken_right(kept, api::edits_of("DELETE", "zones/example.com/records/b/A", "", error).at(0), "after a |+ scalar");
  taken_right(kept, api::edits_of("DELETE", "zones/example.com/records/c/A", "", error).at(0), "the last, after blanks");
  taken_right(kept, put("zones/example.com/records/b/A"), "replaced after a |+ scalar");
  // The last item deleted, blank lines after it, a |+ scalar before it.
  const std::string kept_last = head + "      - name: t\n        type: TXT\n        answers:\n          - |+\n"
                                       "            text\n      - {name: b, type: A, answers: [192.0.2.2]}\n\n\n# end\n";
  taken_right(kept_last, api::edits_of("DELETE", "zones/example.com/records/b/A", "", error).at(0),
              "the last, after a |+ scalar, blank lines after it");
}
