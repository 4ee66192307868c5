// The config's YAML reader: the fast reader against libyaml on every shipped
// config, the constructs it hands over, and the marks errors are built from.
// (tests/fuzz/yaml_reader_fuzz.cpp runs the same comparison on random input.)

#include "core/config/yaml_tree.hpp"
#include "core/config/measurement_scope.hpp"

#include "core/config/yaml_fast_reader.hpp"
#include "core/config/yaml_table_builder.hpp"

#include "tests/test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gtmesh;
using test::source_dir;

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Parses with both readers; expects the fast reader to take the text (or
/// not) and both tables to be the same.
void expect_same(const std::string& text, bool fast) {
  yaml::parse_result a = yaml::parse(text);
  yaml::parse_result b = yaml::parse_with_libyaml(text);
  ASSERT_TRUE(a.doc) << a.message << "\n" << text;
  ASSERT_TRUE(b.doc) << b.message << "\n" << text;
  EXPECT_EQ(!a.used_libyaml, fast) << text;
  EXPECT_EQ(yaml::dump(*a.doc), yaml::dump(*b.doc)) << text;
}


/// Every node's document_order, walking the tree (a table spliced with the
/// wrong offsets would still dump the same texts in some cases).
void orders(const yaml::node& n, std::string& out, int depth = 0) {
  out += std::to_string(n.document_order()) + " ";
  if (depth > 50)
    return;
  if (n.is_sequence())
    for (size_t i = 0; i < n.size(); ++i)
      orders(n[i], out, depth + 1);
  if (n.is_map())
    for (size_t i = 0; i < n.size(); ++i) {
      orders(n.key_at(i), out, depth + 1);
      orders(n.value_at(i), out, depth + 1);
    }
}

std::string table_of(const std::optional<yaml::parse_result>& r) {
  if (!r)
    return "(handed to libyaml)";
  std::string o;
  orders(r->doc->root(), o);
  return yaml::dump(*r->doc) + "orders: " + o + "\nnodes: " + std::to_string(r->doc->node_count());
}

/// Reads `text` with a second thread started at each line in turn; every
/// result must be the one-thread table. Returns how many lines the second
/// thread's work was joined in from.
int expect_same_split_anywhere(const std::string& text) {
  const std::string one = table_of(yaml::read_fast(text));
  int joined = 0;
  for (size_t line = 0; line < text.size(); line = text.find('\n', line) + 1) {
    auto two = yaml::read_fast_split_at(text, line);
    EXPECT_EQ(table_of(two), one) << "second thread from byte " << line << " of\n" << text;
    joined += two && two->read_in_two;
    if (text.find('\n', line) == std::string::npos)
      break;
  }
  return joined;
}

} // namespace

TEST(yaml_tree, the_fast_reader_reads_every_shipped_config_as_libyaml_does) {
  std::vector<std::filesystem::path> files{source_dir() + "/configs/full.yaml"};
  for (const auto& e : std::filesystem::directory_iterator(source_dir() + "/configs/examples"))
    if (e.path().extension() == ".yaml")
      files.push_back(e.path());
  for (const auto& e : std::filesystem::directory_iterator(source_dir() + "/configs/states"))
    if (e.path().extension() == ".yaml")
      files.push_back(e.path());
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    expect_same(read(f), true);
  }
}

TEST(yaml_tree, positions_counted_from_offsets_past_many_indexed_lines_are_libyamls) {
  // The fast reader keeps each node's byte offset and position() counts its
  // line from an index of every 8th line start (issue 42): lines far past
  // the first, blank lines and long flow lines, read by one thread and by
  // two, must give libyaml's line and column for every node (dump()).
  std::string text = "zones:\n";
  for (int i = 0; i < 700; ++i)
    text += "  - name: z" + std::to_string(i) + "\n    records: [{a: 1}, {b: [x, " + std::string(i % 90, 'y') +
            "]}]\n" + (i % 7 ? "" : "\n");
  expect_same(text, true);
  const std::string libyaml = yaml::dump(*yaml::parse_with_libyaml(text).doc);
  auto two = yaml::read_fast_split_at(text, text.find("  - name: z500\n"));
  ASSERT_TRUE(two && two->read_in_two);
  EXPECT_EQ(yaml::dump(*two->doc), libyaml);
}

TEST(yaml_tree, the_block_and_flow_forms_configs_use_stay_on_the_fast_path) {
  expect_same("# c\n---\na: 1\nb:\n- x\n- y: 2\n  z: ~\n", true);                      // indentless, compact
  expect_same("list:\n  - - a\n    - b\n  -\n    c: d\n  - \n  - e # note\nempty:\nx: y\n", true);
  expect_same("c: {k: v, n: , q: \"s\", r: 'it''s'}\nd: [1, [2, 3], {e: f}, ]\n", true);
  expect_same("\"quoted key\": null\n'single' : Null\nt: \"~\"\n", true);
  expect_same("url: http://x:80/a#b\nhost: 10.0.0.1:53\nneg: -1\nq: ?x\nc: :x\n", true);
  expect_same("  indented: root\n  second: 2\n", true);
  expect_same("a:\n    # an indented comment\n    b: 1\n  # another\nc: 2\n", true);
  expect_same("k: [a,  # first\n  b, {c: d,\n    e: f}\n  ]\nz: 1\n", true); // flow over lines
  expect_same("{a: 1, b: [x, y]}\n", true);
  expect_same("", true);
  expect_same("# only a comment\n", true);
}

TEST(yaml_tree, everything_else_goes_to_libyaml_with_the_same_result) {
  expect_same("a: &x [1]\nb: *x\nc: !!str 3\n", false);  // anchors, aliases, tags
  expect_same("a: |\n  block\nb: >\n  folded\n", false); // block scalars
  expect_same("a: plain\n  continued\nb: 1\n", false);   // a multi-line plain scalar
  expect_same("k: [a,\nb]\n", false);                    // a flow line not deeper than its block
  expect_same("k: [a\n  b]\n", false);                  // a plain scalar over two lines
  expect_same("a: \"x\\ty\"\n", false);                   // an escape
  expect_same("a:\tb\n", false);                         // a tab
  expect_same("a: caf\xc3\xa9\n", false);                 // UTF-8 (libyaml counts columns in characters)
  expect_same("---\n", false);
}

TEST(yaml_tree, any_byte_outside_printable_ascii_and_newline_goes_to_libyaml_wherever_it_is) {
  // The fast reader checks bytes eight at a time: each such byte, at each
  // place in a word and in the tail after the last whole word.
  for (int b = 0; b < 256; ++b) {
    if ((b >= 0x20 && b < 0x7f) || b == '\n')
      continue;
    for (size_t at = 3; at < 3 + 19; ++at) {
      std::string text = "k: " + std::string(19, 'a') + "\n";
      text[at] = static_cast<char>(b);
      EXPECT_TRUE(yaml::parse(text).used_libyaml) << "byte " << b << " at " << at;
    }
  }
  EXPECT_FALSE(yaml::parse("k: " + std::string(19, 'a') + "\n").used_libyaml);
}

TEST(yaml_tree, scalars_nulls_and_marks) {
  auto r = yaml::parse("a:\nb: ~\nc: \"~\"\nd: 'x' # c\ne:   [p, q]\n");
  ASSERT_TRUE(r.doc);
  yaml::node root = r.doc->root();
  ASSERT_TRUE(root.is_map());
  ASSERT_EQ(root.size(), 5u);
  EXPECT_TRUE(root.value_at(0).is_null());
  EXPECT_EQ(root.value_at(0).position().line, 0);
  EXPECT_EQ(root.value_at(0).position().column, 2); // just after `a:`, where libyaml puts an empty value
  EXPECT_TRUE(root.value_at(1).is_null());
  EXPECT_TRUE(root.value_at(2).is_scalar());
  EXPECT_EQ(root.value_at(2).scalar(), "~");
  EXPECT_EQ(root.value_at(3).scalar(), "x");
  yaml::node e = root.value_at(4);
  EXPECT_TRUE(e.is_sequence());
  EXPECT_EQ(e.position().line, 4);
  EXPECT_EQ(e.position().column, 5);
  EXPECT_EQ(e[1].scalar(), "q");
  EXPECT_FALSE(e[2].is_defined());
  EXPECT_FALSE(root[0].is_defined()); // a mapping is no sequence
  EXPECT_EQ(yaml::node().size(), 0u);
}

TEST(yaml_tree, errors_name_line_and_column_and_only_one_document_is_read) {
  auto bad = yaml::parse("a: 1\nb: [x, y\n");
  ASSERT_FALSE(bad.doc);
  EXPECT_FALSE(bad.message.empty());
  EXPECT_GE(bad.where.line, 1);

  auto two = yaml::parse("a: 1\n---\nb: 2\n");
  ASSERT_FALSE(two.doc);
  EXPECT_EQ(two.where.line, 1);
  EXPECT_NE(two.message.find("second YAML document"), std::string::npos) << two.message;

  std::string deep(yaml::max_depth + 1, '[');
  auto too_deep = yaml::parse("a: " + deep + "\n");
  ASSERT_FALSE(too_deep.doc);
  EXPECT_NE(too_deep.message.find("nesting deeper"), std::string::npos) << too_deep.message;
  std::string ok_depth(yaml::max_depth - 1, '[');
  ok_depth += std::string(yaml::max_depth - 1, ']');
  EXPECT_TRUE(yaml::parse("a: " + ok_depth + "\n").doc);

  auto alias = yaml::parse("a: *nowhere\n");
  ASSERT_FALSE(alias.doc);
  EXPECT_NE(alias.message.find("unknown anchor"), std::string::npos);
}

TEST(yaml_tree, a_second_thread_reading_the_end_builds_the_same_table_from_any_line) {
  // Every shipped config, split at every line: the items of its lists are
  // joined in, and lines inside an item, a flow collection or a nested list
  // are dropped, with the same table either way.
  int joined = 0;
  for (const char* f : {"/configs/full.yaml", "/configs/examples/dc-mode.yaml", "/configs/examples/nested.yaml"}) {
    SCOPED_TRACE(f);
    joined += expect_same_split_anywhere(read(source_dir() + f));
  }
  EXPECT_GE(joined, 20);
  for (const char* text : {
         "# c\n---\na: 1\nb:\n- x\n- y: 2\n  z: ~\n- - n\n  - m\nc: 3\n", // indentless, compact, nested
         "list:\n  - - a\n    - b\n  -\n    c: d\n  - \n  - e # note\nempty:\nx: y\n",
         "k:\n  - [a,  # first\n  - b]\n  - {c: d,\n    - e: f}\n  - z\n", // `- ` lines inside flow
         "a:\n  - 1\n  - 2\n b: 3\n",                                    // ends on a bad indent
         "a:\n  - 1\n  - &x 2\n  - 3\n",                                 // an anchor after the split
         "a:\n  - 1\n  - caf\xc3\xa9\n  - 3\n",                           // UTF-8 after the split
         "a:\n  - caf\xc3\xa9\n  - 2\n  - 3\n",                           // and before it
         "a:\n  - 1\n---\n  - 2\n",                                      // a marker inside
         "- 1\n- 2\n-\n- [x]\n-\n  - y\n",
         "l:\n  - 'it''s'\n  - {k: 'a''b'}\n  - plain\n  - ['c''d', e]\n"}) { // texts unquoted on both sides
    SCOPED_TRACE(text);
    expect_same_split_anywhere(text);
  }
}

TEST(yaml_tree, a_second_thread_keeps_the_depth_limit_of_the_whole_text) {
  // A list at depth D whose second item nests K more: the table is read
  // only while D + K stays within max_depth, split or not (the second
  // thread alone sees only K).
  // Block maps nested D deep (one key per line, each indented one deeper),
  // then the list.
  auto nested = [](size_t d, size_t inner) {
    std::string t;
    for (size_t i = 0; i < d; ++i)
      t += std::string(i, ' ') + "k:\n";
    std::string pad(d, ' ');
    t += pad + "- x\n" + pad + "- " + std::string(inner, '[') + std::string(inner, ']') + "\n" + pad + "- y\n";
    return t;
  };
  for (size_t inner : {yaml::max_depth - 101, yaml::max_depth - 100, yaml::max_depth - 99}) {
    std::string text = nested(99, inner); // the list is the 100th container
    SCOPED_TRACE(inner);
    auto one = yaml::read_fast(text);
    EXPECT_EQ(one.has_value(), 100 + inner <= yaml::max_depth);
    size_t second_item = text.find("- [");
    second_item = text.rfind('\n', second_item) + 1;
    auto two = yaml::read_fast_split_at(text, second_item);
    EXPECT_EQ(table_of(two), table_of(one));
    if (two)
      EXPECT_TRUE(two->read_in_two);
  }
}

TEST(yaml_tree, a_big_text_is_read_by_two_threads_into_the_one_thread_table) {
  // The second thread's part (about 20,000 nodes) spans several of the
  // chunks splice() gives back as it copies them: a page given back before
  // it was copied would read as zeros in the table.
  std::string text = "zones:\n  - name: example.com\n    records:\n";
  for (int i = 0; i < 3000; ++i)
    text += "      - {name: r" + std::to_string(i) + ", type: A, answers: [192.0.2." + std::to_string(i % 250) +
            ", {address: 198.51.100.1, weight: 2}]}\n" + (i % 7 ? "" : "        # a comment\n");
  text += "profiles: []\n";
  const size_t split_min = yaml::split_min_bytes.load();
  const size_t release_every = yaml::splice_release_every.exchange(1500);
  yaml::split_min_bytes = SIZE_MAX;
  auto one = yaml::read_fast(text);
  yaml::split_min_bytes = 1024;
  auto two = yaml::read_fast(text);
  yaml::split_min_bytes = split_min;
  yaml::splice_release_every = release_every;
  ASSERT_TRUE(one && two);
  EXPECT_FALSE(one->read_in_two);
  EXPECT_TRUE(two->read_in_two);
  EXPECT_EQ(table_of(two), table_of(one));
}

namespace {

const yaml::unread_value unread_zones{"zones"};

/// `text` read with the zones unread must be `text` with the lines of the
/// zones' value blanked (the same marks after it) read whole.
void expect_zones_unread(const std::string& text, const std::string& blanked) {
  yaml::parse_result unread = yaml::parse(text, &unread_zones);
  yaml::parse_result whole = yaml::parse(blanked);
  ASSERT_TRUE(unread.doc) << unread.message << "\n" << text;
  ASSERT_TRUE(whole.doc) << whole.message << "\n" << blanked;
  EXPECT_TRUE(unread.left_unread) << text;
  EXPECT_FALSE(unread.used_libyaml) << text;
  EXPECT_EQ(yaml::dump(*unread.doc), yaml::dump(*whole.doc)) << text;
}

/// Where the end of the value is not plain to see, the text is read whole.
void expect_read_whole(const std::string& text) {
  yaml::parse_result unread = yaml::parse(text, &unread_zones);
  yaml::parse_result whole = yaml::parse(text);
  EXPECT_FALSE(unread.left_unread) << text;
  ASSERT_EQ(!unread.doc, !whole.doc) << text;
  if (whole.doc)
    EXPECT_EQ(yaml::dump(*unread.doc), yaml::dump(*whole.doc)) << text;
  else
    EXPECT_EQ(unread.message, whole.message);
}

} // namespace

TEST(yaml_tree, a_root_value_left_unread_reads_as_null_and_every_other_node_as_before) {
  expect_zones_unread("cluster: {name: c}\nzones:\n  - name: a\n    records:\n      - {name: x, type: A}\n"
                      "# a comment\n\n  - name: b\nprofiles: []\ngeo: {database: /x}\n",
                      "cluster: {name: c}\nzones:\n\n\n\n\n\n\nprofiles: []\ngeo: {database: /x}\n");
  // An indentless list, comments at the root's indentation inside it.
  expect_zones_unread("zones:\n- name: a\n# note\n  records: []\n- name: b\ngeo: {database: /x}\n",
                      "zones:\n\n\n\n\ngeo: {database: /x}\n");
  // Last in the text; on one line; an indented root mapping; a flow over
  // lines indented deeper; any key after it.
  expect_zones_unread("datacenters: [a]\nzones:\n  - name: a\n# end\n", "datacenters: [a]\nzones:\n\n\n");
  expect_zones_unread("zones: [{name: a}]\nprobes: []\n", "zones:\nprobes: []\n");
  expect_zones_unread("  zones:\n    - a\n  probes: []\n", "  zones:\n\n  probes: []\n");
  expect_zones_unread("zones: [a,\n  b]\ncolour: blue\n", "zones:\n\ncolour: blue\n");
}

TEST(yaml_tree, a_root_value_the_fast_reader_cannot_read_is_read_whole_by_libyaml) {
  // Each is a place where a line at the root's column, even one that looks
  // like a root key, is still inside the value.
  expect_read_whole("zones: [a,\nprofiles: b]\nprofiles: []\n");                                  // a wrapped flow
  expect_read_whole("zones:\n  - {name: x, answers: \"v=spf1\nprofiles: x\"}\nprofiles: []\n");  // a wrapped string
  expect_read_whole("zones:\n  - a: |\n      text\nprofiles: []\n");                              // a block scalar
  expect_read_whole("zones:\n  - caf\xc3\xa9\nprofiles: []\n"); // bytes the fast reader leaves to libyaml
  // Errors inside the value are errors, as when it is kept.
  expect_read_whole("zones:\n  - {name: [a\nprofiles: []\n");
  expect_read_whole("zones:\n  - a\n---\nprofiles: []\n");
  expect_read_whole("zones: []\n- a\nprofiles: []\n");
  // Only the root mapping's key, and only unquoted.
  EXPECT_FALSE(yaml::parse("a:\n  zones: [x]\nb: 1\n", &unread_zones).left_unread);
  EXPECT_FALSE(yaml::parse("\"zones\": [x]\nprofiles: []\n", &unread_zones).left_unread);
}

// core/config/measurement_scope: what an agent's tasks are built from.
TEST(measurement_scope, records_comments_and_layout_leave_it_and_a_measurement_change_does_not) {
  const std::string base = "# v1\nmeasurement: {host_interval: 2s}\ndatacenters: [{name: fra}]\n"
                           "zones:\n  - name: a.example\n    records: [{name: www, type: A, answers: [192.0.2.1]}]\n";
  auto a = measurement_scope_data(base);
  ASSERT_TRUE(a);
  EXPECT_EQ(measurement_scope_data("# v2, another comment\nmeasurement:\n  host_interval: 2s\n"
                                   "datacenters:\n  - name: fra\nzones:\n  - name: a.example\n"
                                   "    records: [{name: www, type: A, answers: [192.0.2.99]}]\n"),
            a);
  EXPECT_NE(measurement_scope_data("measurement: {host_interval: 3s}\ndatacenters: [{name: fra}]\nzones: []\n"), a);
  EXPECT_NE(measurement_scope_data("measurement: {host_interval: 2s}\ndatacenters: [{name: fra}, {name: iad}]\n"
                                   "zones: []\n"),
            a);
  // Kinds and lengths are written, so nesting cannot alias.
  EXPECT_NE(measurement_scope_data("a: [b, c]\n"), measurement_scope_data("a: [bc]\n"));
  EXPECT_NE(measurement_scope_data("a: {b: c}\n"), measurement_scope_data("a: [b, c]\n"));
  EXPECT_FALSE(measurement_scope_data("a: [b\n"));
}

TEST(yaml_tree, released_nodes_read_as_undefined_and_their_neighbours_as_before) {
  // 4,000 items of one sequence: nodes 2..4001 (the root map and its key
  // come first). Released: the whole pages inside items 100..3100.
  std::string text = "items:\n";
  for (int i = 0; i < 4000; ++i)
    text += "  - v" + std::to_string(i) + "\n";
  auto parsed = yaml::parse(text);
  ASSERT_TRUE(parsed.doc) << parsed.message;
  const yaml::node items = parsed.doc->root().value_at(0);
  ASSERT_EQ(items.size(), 4000u);
  yaml::release_nodes(items[100], items[3100]);
  size_t undefined = 0;
  for (size_t i = 0; i < 4000; ++i) {
    const yaml::node n = items[i];
    if (!n.is_defined()) {
      ++undefined;
      EXPECT_GE(i, 100u);
      EXPECT_LT(i, 3100u);
      EXPECT_EQ(n.scalar(), "") << "an undefined node has no bytes";
      continue;
    }
    EXPECT_EQ(n.scalar(), "v" + std::to_string(i));
  }
  // 12-byte nodes, 4 KiB pages, edges between nodes (every third page,
  // 12 KiB apart): the 3,000 nodes (36 KB) always hold two such edges
  // wherever the allocator put them, so at least 1,024 nodes are gone;
  // never one outside, none read half zeroed. (A range shorter than two
  // edges apart may release nothing: 1,900 nodes did, on some layouts.)
  EXPECT_GE(undefined, 1024u);
  EXPECT_EQ(items[99].scalar(), "v99");
  EXPECT_EQ(items[3100].scalar(), "v3100");
  EXPECT_EQ(parsed.doc->root().key_at(0).scalar(), "items");
  // A range backwards, or across documents: nothing happens.
  auto other = yaml::parse("items: [a, b, c]\n");
  yaml::release_nodes(items[3999], items[3101]);
  yaml::release_nodes(items[3101], other.doc->root().value_at(0)[2]);
  EXPECT_EQ(items[3500].scalar(), "v3500");
  EXPECT_EQ(items[3999].scalar(), "v3999");

  // With an alias (libyaml reads it; `*x` is item 0's node), nothing goes.
  auto aliased = yaml::parse("items:\n  - &x v0\n" + text.substr(text.find("  - v1\n")) + "  - *x\n");
  ASSERT_TRUE(aliased.doc) << aliased.message;
  const yaml::node with = aliased.doc->root().value_at(0);
  ASSERT_EQ(with.size(), 4001u);
  yaml::release_nodes(with[0], with[3999]);
  for (size_t i = 0; i < 4000; ++i)
    ASSERT_EQ(with[i].scalar(), "v" + std::to_string(i)) << i;
  EXPECT_EQ(with[4000].scalar(), "v0");
}

namespace gtmesh {

// What an agent tells without reading a text: only the zones' bytes changed.
TEST(measurement_scope, a_text_that_differs_only_inside_the_zones_keeps_it_and_anything_else_is_read) {
  const std::string head = "# the cluster\nmeasurement: {host_interval: 2s}\ndatacenters: [{name: fra}]\nzones:\n";
  const std::string zones = "  - name: example.com\n    records:\n      - {name: a, type: A, answers: [192.0.2.1]}\n";
  const std::string tail = "profiles:\n  - {name: p, method: weighted}\n";
  auto scope = read_measurement_scope(head + zones + tail);
  ASSERT_TRUE(scope);
  ASSERT_TRUE(scope->comparable);
  EXPECT_EQ(scope->data, measurement_scope_data(head + zones + tail).value());
  // Records added, changed, commented; zones at column 0: the same, and so
  // says a reading.
  for (const std::string& other :
       {zones + "      - {name: b, type: A, answers: [192.0.2.2]}\n",
        std::string("  - name: example.com\n    records: []\n# a comment\n\n"),
        std::string("- name: example.org\n  records: [{name: c, type: A, answers: [192.0.2.3]}]\n")}) {
    EXPECT_TRUE(same_measurement_scope(*scope, head + other + tail)) << other;
    EXPECT_EQ(measurement_scope_data(head + other + tail), scope->data) << other;
  }
  // A block scalar in a record: libyaml reads that text, zones included,
  // so its data differs from the fast reader's; only the zones changed.
  EXPECT_TRUE(same_measurement_scope(*scope, head + zones + "  - name: example.net\n    records:\n      - name: d\n"
                                                              "        type: TXT\n        answers:\n          - |\n"
                                                              "            text\n" + tail));
  // A root key among the zones, a document marker, another section, a
  // changed line outside: read (and the data differs or cannot be told).
  for (const std::string& other : {zones + "rum: {join: ecs}\n", zones + "---\n", zones + "\tx: 1\n"})
    EXPECT_FALSE(same_measurement_scope(*scope, head + other + tail)) << other;
  EXPECT_FALSE(same_measurement_scope(*scope, head + zones + "profiles:\n  - {name: q, method: weighted}\n"));
  EXPECT_FALSE(same_measurement_scope(*scope, "measurement: {host_interval: 3s}\n" + head.substr(head.find("datacenters")) +
                                                 zones + tail));
  EXPECT_NE(measurement_scope_data(head + zones + "rum: {join: ecs}\n" + tail), scope->data);
  // A line break libyaml counts but "\n" is not (CR, NEL, LS, PS) may hide
  // a root key: read.
  for (const std::string& br : {std::string("\r"), std::string("\xC2\x85"), std::string("\xE2\x80\xA8")})
    EXPECT_FALSE(same_measurement_scope(*scope, head + "  - name: example.com\n    records: []" + br +
                                                    "rum: {join: ecs}\n" + tail)) << br.size();
  // A root mapping indented: its keys would hide among indented lines.
  auto indented = read_measurement_scope("  measurement: {host_interval: 2s}\n  zones:\n    - {name: a}\n"
                                         "  profiles: []\n");
  ASSERT_TRUE(indented);
  EXPECT_FALSE(indented->comparable);
  EXPECT_FALSE(same_measurement_scope(*indented, "  measurement: {host_interval: 2s}\n  zones:\n    - {name: a}\n"
                                                 "  rum: {join: ecs}\n  profiles: []\n"));
  // The zones last, and inline: still told.
  auto last = read_measurement_scope("datacenters: [{name: fra}]\nzones: []\n");
  ASSERT_TRUE(last);
  EXPECT_TRUE(last->comparable);
  EXPECT_TRUE(same_measurement_scope(*last, "datacenters: [{name: fra}]\nzones:\n  - {name: a}\n"));
  EXPECT_FALSE(same_measurement_scope(*last, "datacenters: [{name: fra}]\nzones: []\nrum: {join: ecs}\n"));
  // An alias: libyaml reads that text, zones included; never told so.
  auto aliased = read_measurement_scope("zones:\n  - &z {name: a}\nextra: *z\n");
  ASSERT_TRUE(aliased);
  EXPECT_FALSE(aliased->comparable);
  EXPECT_FALSE(same_measurement_scope(*aliased, "zones:\n  - &z {name: b}\nextra: *z\n"));
}

} // namespace gtmesh
