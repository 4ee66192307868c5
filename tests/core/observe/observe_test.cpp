// The exposition of counters and status (core/observe/): what a scrape says
// must follow from the values given, in the text format Prometheus reads.

#include "core/observe/decider_metrics.hpp"
#include "core/observe/dns_metrics.hpp"
#include "core/observe/exposition.hpp"
#include "core/text/display_text.hpp"
#include "core/text/iso_time.hpp"
#include "core/text/log.hpp"
#include "core/text/wrap.hpp"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

namespace gtmesh::observe {
namespace {

/// series text ("name{labels}") -> value, every sample line of a scrape.
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    auto space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

TEST(exposition, histograms_are_cumulative_and_end_at_inf) {
  latency_histogram h;
  h.observe(0.00005); // first bucket
  h.observe(0.003);   // le 0.005
  h.observe(10);      // above every bound
  families f;
  histogram("gtmesh_x_seconds", "x").add(h).append_to(f);
  auto s = samples(to_text(f));
  EXPECT_EQ(s["gtmesh_x_seconds_bucket{le=\"0.0001\"}"], 1);
  EXPECT_EQ(s["gtmesh_x_seconds_bucket{le=\"0.0025\"}"], 1);
  EXPECT_EQ(s["gtmesh_x_seconds_bucket{le=\"0.005\"}"], 2);
  EXPECT_EQ(s["gtmesh_x_seconds_bucket{le=\"2.5\"}"], 2);
  EXPECT_EQ(s["gtmesh_x_seconds_bucket{le=\"+Inf\"}"], 3);
  EXPECT_EQ(s["gtmesh_x_seconds_count"], 3);
  EXPECT_NEAR(s["gtmesh_x_seconds_sum"], 10.00305, 1e-9);
}

TEST(exposition, families_without_samples_are_left_out_and_types_are_declared) {
  families f;
  gauge("gtmesh_empty", "nothing").append_to(f);
  counter("gtmesh_c_total", "c").add(3, {{"k", "a\"b"}}).append_to(f);
  std::string text = to_text(f);
  EXPECT_EQ(text.find("gtmesh_empty"), std::string::npos);
  EXPECT_NE(text.find("# TYPE gtmesh_c_total counter"), std::string::npos);
  EXPECT_NE(text.find("gtmesh_c_total{k=\"a\\\"b\"} 3"), std::string::npos) << "label values are escaped:\n" << text;
}

TEST(dns_metrics, every_counter_appears_once_with_its_value) {
  dns::dns_counters c;
  double total = 0;
  const size_t sign_first = static_cast<size_t>(dns::dns_counter::rrsig_sign_ns);
  const size_t sign_last = static_cast<size_t>(dns::dns_counter::rrsig_sign_le_1ms);
  for (size_t i = 0; i < dns::dns_counter_count; ++i) {
    c.values[i] = i + 1;
    if (i < sign_first || i > sign_last) // the signing-time histogram's parts are checked below
      total += static_cast<double>(i + 1);
  }
  families f;
  append_dns_metrics(c, 7, f);
  const std::string text = to_text(f);
  auto s = samples(text);
  double sum = 0;
  for (const auto& [series, v] : s)
    if (series != "gtmesh_dns_snapshot_generation" && series.rfind("gtmesh_dnssec_signing_duration_seconds", 0) != 0)
      sum += v;
  EXPECT_EQ(sum, total) << "each counter's value exactly once";
  // The signing-time histogram: cumulative buckets of 10 us .. 1 ms, the
  // count is every signature made, the sum the time in seconds.
  const std::string h = "gtmesh_dnssec_signing_duration_seconds";
  auto value = [&](dns::dns_counter k) { return static_cast<double>(c[k]); };
  EXPECT_NE(text.find("# TYPE " + h + " histogram"), std::string::npos) << text;
  EXPECT_EQ(s[h + "_bucket{le=\"1e-05\"}"], value(dns::dns_counter::rrsig_sign_le_10us)) << text;
  EXPECT_EQ(s[h + "_bucket{le=\"2.5e-05\"}"],
            value(dns::dns_counter::rrsig_sign_le_10us) + value(dns::dns_counter::rrsig_sign_le_25us));
  EXPECT_EQ(s[h + "_bucket{le=\"+Inf\"}"], value(dns::dns_counter::rrsig_made));
  EXPECT_EQ(s[h + "_count"], value(dns::dns_counter::rrsig_made));
  EXPECT_DOUBLE_EQ(s[h + "_sum"], value(dns::dns_counter::rrsig_sign_ns) / 1e9);
  EXPECT_EQ(s["gtmesh_dns_queries_total{transport=\"udp\"}"], 1 + static_cast<int>(dns::dns_counter::udp_queries));
  EXPECT_EQ(s["gtmesh_dns_responses_total{rcode=\"NXDOMAIN\"}"], 1 + static_cast<int>(dns::dns_counter::nxdomain));
  EXPECT_EQ(s["gtmesh_dns_queries_by_type_total{qtype=\"AAAA\"}"], 1 + static_cast<int>(dns::dns_counter::qtype_aaaa));
  EXPECT_EQ(s["gtmesh_dns_snapshot_generation"], 7);
}

TEST(dns_metrics, qtypes_map_to_bounded_buckets) {
  EXPECT_EQ(dns::qtype_counter(1), dns::dns_counter::qtype_a);
  EXPECT_EQ(dns::qtype_counter(28), dns::dns_counter::qtype_aaaa);
  EXPECT_EQ(dns::qtype_counter(65), dns::dns_counter::qtype_https);
  EXPECT_EQ(dns::qtype_counter(99), dns::dns_counter::qtype_other);
  EXPECT_EQ(dns::qtype_counter(65535), dns::dns_counter::qtype_other);
}

TEST(dns_metrics, answers_split_by_dc_and_fallbacks_by_outcome) {
  dns::answer_totals t{{{"www.x.", "A", "fra", "", "answer"}, 4},
                       {{"www.x.", "A", "", "", "answer"}, 1},
                       {{"api.x.", "A", "iad", "us-east", "answer"}, 2},
                       {{"www.x.", "A", "", "", "fail_safe"}, 1}};
  families f;
  append_answer_metrics(t, f);
  auto s = samples(to_text(f));
  EXPECT_EQ(s["gtmesh_answers_total{record=\"www.x.\",type=\"A\",dc=\"fra\",endpoint=\"\"}"], 4);
  EXPECT_EQ(s["gtmesh_answers_total{record=\"www.x.\",type=\"A\",dc=\"\",endpoint=\"\"}"], 1);
  EXPECT_EQ(s["gtmesh_answers_total{record=\"api.x.\",type=\"A\",dc=\"iad\",endpoint=\"us-east\"}"], 2);
  EXPECT_EQ(s["gtmesh_answer_fallbacks_total{record=\"www.x.\",type=\"A\",outcome=\"fail_safe\"}"], 1);
  EXPECT_EQ(s.size(), 4u);
}

TEST(decider_metrics, dc_health_and_ages_follow_the_status_and_the_scrape_time) {
  decider::decider_status st;
  st.config_version = 4;
  st.snapshot_generation = 9;
  st.snapshot_built_ms = 1'000'000;
  decider::dc_status fra;
  fra.name = "fra";
  fra.up = false;
  fra.drained = true;
  fra.services.push_back({"web", false});
  fra.metrics.push_back({"healthyBackends", "web", 0, 990'000, true});
  decider::dc_status iad;
  iad.name = "iad";
  iad.up = true;
  iad.agents_connected = 2;
  st.dcs = {fra, iad};
  st.origins.push_back({"iad/a1", "iad", true, 995'000, 999'000});
  st.frames_dropped["malformed body"] = 3;
  st.protections.push_back({"www.x. A", 990'000, 1'050'000, {"fra", "iad"}, "2 of 3 turned unavailable"});
  st.protection_holds = 2;
  families f;
  append_decider_metrics(st, 1'002'500, f);
  auto s = samples(to_text(f));
  EXPECT_EQ(s["gtmesh_dc_up{dc=\"fra\"}"], 0);
  EXPECT_EQ(s["gtmesh_dc_up{dc=\"iad\"}"], 1);
  EXPECT_EQ(s["gtmesh_dc_drained{dc=\"fra\"}"], 1);
  EXPECT_EQ(s["gtmesh_dc_service_up{dc=\"fra\",service=\"web\"}"], 0);
  EXPECT_EQ(s["gtmesh_dc_agents_connected{dc=\"iad\"}"], 2);
  EXPECT_DOUBLE_EQ(s["gtmesh_dc_metric_age_seconds{dc=\"fra\",metric=\"healthyBackends\",service=\"web\"}"], 12.5);
  EXPECT_DOUBLE_EQ(s["gtmesh_snapshot_age_seconds"], 2.5);
  EXPECT_DOUBLE_EQ(s["gtmesh_agent_measurement_lag_seconds{origin=\"iad/a1\",dc=\"iad\"}"], 7.5);
  EXPECT_EQ(s["gtmesh_config_version"], 4);
  EXPECT_EQ(s["gtmesh_mesh_frames_dropped_total{reason=\"malformed body\"}"], 3);
  EXPECT_EQ(s["gtmesh_protection_records_held"], 1);
  EXPECT_EQ(s["gtmesh_protection_holds_total"], 2);
}

} // namespace
} // namespace gtmesh::observe

namespace gtmesh {
namespace {

TEST(iso_time, formats_utc_with_milliseconds_and_parses_back) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601_utc(1'796'102'165'064), "2026-12-01T05:16:05.064Z");
  EXPECT_EQ(parse_iso8601_utc("2026-12-01T05:16:05.064Z"), 1'796'102'165'064);
  EXPECT_EQ(parse_iso8601_utc("2026-12-01 05:16:05"), 1'796'102'165'000);
  EXPECT_EQ(parse_iso8601_utc("2026-12-01T05:16:05+00:00"), 1'796'102'165'000);
  EXPECT_EQ(parse_iso8601_utc("2026-12-01"), 1'796'083'200'000);
  for (int64_t ms : {int64_t{1}, int64_t{951'782'400'123}, int64_t{4'102'444'799'999}})
    EXPECT_EQ(parse_iso8601_utc(iso8601_utc(ms)), ms) << ms;
}

TEST(iso_time, refuses_what_is_not_a_utc_time) {
  for (const char* bad : {"", "yesterday", "2026-13-01", "2026-02-30T00:00:00Z", "2026-12-01T24:00:00Z",
                          "2026-12-01T05:16:05+02:00", "2026-12-01T05:16", "2026-12-01T05:16:05.Z", "1796097765064"})
    EXPECT_FALSE(parse_iso8601_utc(bad).has_value()) << bad;
}

// A peer's text on a screen (issue 24: an agent wrote a line of its own
// into gtmeshctl status).
TEST(display_text, no_peer_text_starts_a_line_or_drives_the_terminal) {
  EXPECT_EQ(display_text("healthy\n  dc iad: host up, FORGED"), "healthy?  dc iad: host up, FORGED");
  EXPECT_EQ(display_text("a\rb\tc\x1b[31mred\x7f"), "a?b?c?[31mred?");
  EXPECT_EQ(display_text("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93"); // UTF-8 kept
  EXPECT_EQ(display_text("\xc2\x9b" "31m"), "?31m");                                  // C1 CSI
  EXPECT_EQ(display_text("\xff\xc0\xaf\xed\xa0\x80"), "??????");                  // invalid, overlong, surrogate
  EXPECT_EQ(display_text(std::string(2000, 'x')).size(), 1024u);
  EXPECT_EQ(display_text("ab\xc3\xa9", 3), "ab"); // cut on a character boundary
  EXPECT_EQ(display_text("report\nline 2\x1b", 64, true), "report\nline 2?"); // our own multi-line reports
  for (int c = 0; c < 256; ++c) {
    std::string out = display_text(std::string(1, static_cast<char>(c)));
    for (unsigned char o : out)
      EXPECT_TRUE(o >= 0x20 && o != 0x7f) << c;
  }
}

TEST(wrap_lines, fits_the_width_keeps_short_lines_and_indents_continuations) {
  std::string long_line = "  mesh links: 4 up; 1 connections accepted, 0 refused (too many handshakes), 0 handshake "
                          "timeouts, 0 failed handshakes, 0 peers refused, 0 idle timeouts, 0 oversized frames";
  std::string text = "short line\n" + long_line + "\n";
  std::string w = wrap_lines(text, 100);
  std::string joined, line;
  std::istringstream in(w);
  int lines = 0;
  while (std::getline(in, line)) {
    EXPECT_LE(line.size(), 100u) << line;
    if (lines >= 2) {
      EXPECT_EQ(line.rfind("      ", 0), 0u) << "continuations are indented 4 past the line's own 2: " << line;
    }
    ++lines;
  }
  EXPECT_EQ(lines, 3);
  EXPECT_EQ(w.rfind("short line\n  mesh links:", 0), 0u);
  EXPECT_EQ(w.back(), '\n');
  // Nothing lost: the words are the same.
  auto words = [](const std::string& s) {
    std::istringstream i(s);
    std::vector<std::string> out;
    for (std::string x; i >> x;)
      out.push_back(x);
    return out;
  };
  EXPECT_EQ(words(w), words(text));
  std::string word(150, 'x');
  EXPECT_EQ(wrap_lines(word), word) << "a single long word is left whole";
}

TEST(log_options, accept_the_documented_values_and_name_the_bad_one) {
  log_settings s;
  std::string error;
  EXPECT_TRUE(parse_log_options("json", "warn", s, error));
  EXPECT_TRUE(s.json);
  EXPECT_EQ(s.level, log_level::warn);
  EXPECT_TRUE(parse_log_options("", "", s, error));
  EXPECT_FALSE(s.json);
  EXPECT_EQ(s.level, log_level::info);
  EXPECT_FALSE(parse_log_options("xml", "", s, error));
  EXPECT_NE(error.find("--log-format xml"), std::string::npos);
  EXPECT_FALSE(parse_log_options("text", "loud", s, error));
  EXPECT_NE(error.find("--log-level loud"), std::string::npos);
}

TEST(status_json, is_one_object_with_every_dc_and_ages_at_the_given_time) {
  decider::decider_status st;
  st.node = "d\"1";
  st.at_ms = 1'000'000;
  decider::dc_status fra;
  fra.name = "fra";
  fra.up = false;
  fra.metrics.push_back({"status", "", 0, 990'000, true});
  st.dcs = {fra};
  st.frames_dropped["malformed body"] = 2;
  std::string j = decider::to_json(st, 1'004'000);
  EXPECT_EQ(j.front(), '{');
  EXPECT_EQ(j.back(), '}');
  EXPECT_NE(j.find("\"node\":\"d\\\"1\""), std::string::npos) << j;
  EXPECT_NE(j.find("{\"name\":\"fra\",\"up\":false"), std::string::npos) << j;
  EXPECT_NE(j.find("\"age_seconds\":14"), std::string::npos) << j;
  EXPECT_NE(j.find("\"frames_dropped\":{\"malformed body\":2}"), std::string::npos) << j;
  EXPECT_EQ(j.find(",}"), std::string::npos) << j;
  EXPECT_EQ(j.find(",]"), std::string::npos) << j;
}

} // namespace
} // namespace gtmesh
