// DNSSEC online signing in the query path (docs/dnssec.md): DO=0 answers
// stay byte for byte what they were, DO=1 answers carry RRSIGs that OpenSSL
// verifies over the canonical RRset, the signature cache hits, bounds and
// counts, and the cached signed path allocates nothing (allocation_test.cpp
// has the counting hook; these tests only use the processor).

#include "core/config/config_loader.hpp"
#include "core/dns/lookup/query_processor.hpp"
#include "core/dnssec/covering_name.hpp"
#include "core/dnssec/rrset_signer.hpp"
#include "core/dnssec/zone_keys.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/alias/alias_answers.hpp"
#include "core/routing/engine.hpp"
#include "core/routing/state_file.hpp"
#include "tests/core/dns/dns_test_messages.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

#include <openssl/ecdsa.h>
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gtmesh::dns {
namespace {

using test::bytes;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A key file in a fresh folder (made once per test binary run).
std::string key_file(uint8_t algorithm) {
  static std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("gtmesh-dnssec-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  std::string path = dir + "/k" + std::to_string(algorithm) + ".pem";
  if (!std::filesystem::exists(path)) {
    std::string error;
    EXPECT_TRUE(dnssec::generate_key_file(path, algorithm, error)) << error;
  }
  return path;
}

struct full_config {
  snapshot_ptr unsigned_snapshot, signed_snapshot;
  std::vector<std::pair<std::string, uint16_t>> questions;
};

/// configs/full.yaml with configs/states/full-healthy.yaml, once as it is and
/// once with `dnssec:` on its zone.
full_config load_full(uint8_t algorithm = dnssec::algorithm_ecdsap256sha256) {
  const std::string file = gtmesh::test::source_dir() + "/configs/full.yaml";
  const std::string text = read(file);
  std::string signed_text = text;
  const std::string zone_line = "  - name: example.com\n";
  auto at = signed_text.find(zone_line);
  EXPECT_NE(at, std::string::npos);
  signed_text.insert(at + zone_line.size(), "    dnssec: {algorithm: " + std::to_string(algorithm) +
                                               ", key: " + key_file(algorithm) + "}\n");
  full_config out;
  const int64_t now = 1'795'953'600'000;
  for (const std::string* t : std::initializer_list<const std::string*>{&text, &signed_text}) {
    load_result loaded = load_config_text(*t, file, routing_methods());
    EXPECT_TRUE(loaded.ok()) << loaded.report();
    compile_result compiled = compile_plan(loaded.cfg, 3);
    EXPECT_TRUE(compiled.plan) << compiled.error;
    state_load_result st =
      load_state_text(read(gtmesh::test::source_dir() + "/configs/states/full-healthy.yaml"), "full-healthy.yaml",
                      *compiled.plan, now);
    EXPECT_TRUE(st.view);
    (t == &text ? out.unsigned_snapshot : out.signed_snapshot) = make_snapshot(compiled.plan, st.view, now, 1);
    if (t == &text)
      for (const auto& r : compiled.plan->records)
        out.questions.emplace_back(std::string(r.name), static_cast<uint16_t>(r.type));
  }
  for (const char* n : {"nope.example.com.", "www.example.com.", "a.b.c.example.com.", "example.com."})
    for (uint16_t type : {1, 28, 15, 16, 33, 6, 2, 5, 48, 255, 99})
      out.questions.emplace_back(n, type);
  return out;
}

bytes answer(query_processor& p, const snapshot_ptr& s, const test::query_spec& q, int64_t now_ms) {
  bytes wire = test::make_query(q);
  std::vector<uint8_t> buffer(max_tcp_message);
  std::copy(wire.begin(), wire.end(), buffer.begin());
  query_source src{*ip_address::parse("198.51.100.7"), transport::tcp};
  size_t n = p.process(std::span<uint8_t>(buffer.data(), buffer.size()), wire.size(), src, s.get(),
                       query_time::at(now_ms));
  return bytes(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n));
}

TEST(dnssec, do0_answers_of_every_record_of_full_yaml_are_byte_identical_to_the_unsigned_zone) {
  full_config f = load_full();
  worker_counters c1, c2;
  query_processor plain(lookup_settings{}, c1, nullptr, nullptr, 11);
  query_processor signing(lookup_settings{}, c2, nullptr, nullptr, 11);
  size_t compared = 0, differing_with_do = 0;
  for (const auto& [name, type] : f.questions) {
    if (type == 48)
      continue; // DNSKEY exists only in the signed zone (checked below)
    for (bool edns : {false, true}) {
      test::query_spec q = test::spec(name, type);
      q.edns = edns;
      bytes a = answer(plain, f.unsigned_snapshot, q, 1'795'953'600'000);
      bytes b = answer(signing, f.signed_snapshot, q, 1'795'953'600'000);
      EXPECT_EQ(a, b) << name << " type " << type << (edns ? " with EDNS" : "");
      ++compared;
    }
    test::query_spec d = test::spec(name, type);
    d.edns = d.dnssec_ok = true;
    differing_with_do += answer(plain, f.unsigned_snapshot, d, 1'795'953'600'000) !=
                         answer(signing, f.signed_snapshot, d, 1'795'953'600'000);
  }
  EXPECT_GE(compared, 100u);
  EXPECT_GT(differing_with_do, compared / 4) << "with DO=1 the signed zone's answers do differ";
  EXPECT_EQ(c2.get(dns_counter::dnssec_signed), differing_with_do);
}

/// Verifies the RRSIG `sig` (a parsed record) over `rrset` with `key`.
bool verify(const dnssec::zone_key& key, const std::vector<uint8_t>& apex, const test::record& sig,
            const std::vector<test::record>& rrset, const std::vector<uint8_t>& owner) {
  // RRSIG RDATA: 18 bytes, the signer (uncompressed), the signature.
  const bytes& r = sig.rdata;
  const size_t signer_end = 18 + apex.size();
  std::vector<uint8_t> data(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(signer_end));
  std::vector<bytes> rdatas;
  for (const auto& rr : rrset)
    rdatas.push_back(rr.rdata); // A/AAAA/TXT here: no names to canonicalise
  std::sort(rdatas.begin(), rdatas.end());
  for (const auto& rd : rdatas) {
    data.insert(data.end(), owner.begin(), owner.end());
    const uint32_t ttl = rrset[0].ttl;
    uint8_t fixed[10] = {static_cast<uint8_t>(rrset[0].type >> 8), static_cast<uint8_t>(rrset[0].type), 0, 1,
                         static_cast<uint8_t>(ttl >> 24), static_cast<uint8_t>(ttl >> 16), static_cast<uint8_t>(ttl >> 8),
                         static_cast<uint8_t>(ttl), static_cast<uint8_t>(rd.size() >> 8), static_cast<uint8_t>(rd.size())};
    data.insert(data.end(), fixed, fixed + 10);
    data.insert(data.end(), rd.begin(), rd.end());
  }
  // r || s -> DER for OpenSSL.
  ECDSA_SIG* es = ECDSA_SIG_new();
  ECDSA_SIG_set0(es, BN_bin2bn(r.data() + signer_end, 32, nullptr), BN_bin2bn(r.data() + signer_end + 32, 32, nullptr));
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(es, &der);
  ECDSA_SIG_free(es);
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  bool ok = EVP_DigestVerifyInit(md, nullptr, EVP_sha256(), nullptr, key.pkey.get()) == 1 &&
            EVP_DigestVerify(md, der, static_cast<size_t>(der_len), data.data(), data.size()) == 1;
  EVP_MD_CTX_free(md);
  OPENSSL_free(der);
  return ok;
}

TEST(dnssec, a_do1_answer_carries_an_rrsig_openssl_verifies_and_a_changed_rrset_does_not) {
  full_config f = load_full();
  worker_counters c;
  query_processor p(lookup_settings{}, c, nullptr, nullptr, 3);
  test::query_spec q = test::spec("ns1.example.com", 1);
  q.edns = q.dnssec_ok = true;
  auto m = test::parse_message(answer(p, f.signed_snapshot, q, 1'795'953'600'000));
  ASSERT_TRUE(m);
  std::vector<test::record> a, sigs;
  for (const auto& r : m->answers)
    (r.type == 46 ? sigs : a).push_back(r);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(sigs.size(), 1u);
  std::string error;
  auto key = dnssec::load_key_file(key_file(dnssec::algorithm_ecdsap256sha256), 13, error);
  ASSERT_TRUE(key) << error;
  const auto apex = *text_to_wire("example.com.");
  const auto owner = *text_to_wire("ns1.example.com.");
  EXPECT_TRUE(verify(*key, apex, sigs[0], a, owner));
  // Inception an hour back, expiration a week ahead (the defaults).
  const bytes& r = sigs[0].rdata;
  auto u32 = [&](size_t at) { return uint32_t(r[at]) << 24 | uint32_t(r[at + 1]) << 16 | uint32_t(r[at + 2]) << 8 | r[at + 3]; };
  EXPECT_EQ(u32(8), 1'795'953'600u + 7 * 86400u);
  EXPECT_EQ(u32(12), 1'795'953'600u - 3600u);
  a[0].rdata[3] ^= 1; // another address: the signature must not hold for it
  EXPECT_FALSE(verify(*key, apex, sigs[0], a, owner));
}

TEST(dnssec, an_alias_answer_is_signed_like_any_answer_and_a_new_resolution_gets_a_new_signature) {
  const std::string text = "datacenters: [{name: fra}]\nresolver: {servers: [127.0.0.1]}\nzones:\n"
                           "  - name: example.com\n    dnssec: {key: " + key_file(dnssec::algorithm_ecdsap256sha256) +
                           "}\n    soa: {primary: ns1, admin: hostmaster}\n    ns: [ns1]\n    records:\n"
                           "      - {name: \"@\", type: ALIAS, target: lb.example.net.}\n";
  load_result loaded = load_config_text(text, "alias.yaml", routing_methods());
  ASSERT_TRUE(loaded.ok()) << loaded.report();
  compile_result compiled = compile_plan(loaded.cfg, 1);
  ASSERT_TRUE(compiled.plan) << compiled.error;
  alias_resolution lb;
  lb.known = true;
  lb.ttl = 60;
  lb.a = {*ip_address::parse("192.0.2.10"), *ip_address::parse("192.0.2.11")};
  auto snapshot_of = [&](const alias_resolution& r, const alias_answers* previous) {
    auto a = build_alias_answers(*compiled.plan, [&](uint32_t) { return &r; },
                                 [](uint32_t, const ip_address&) { return alias_health{}; }, previous);
    return make_snapshot(compiled.plan, empty_view(*compiled.plan), 1'795'953'600'000, 1, nullptr, nullptr, a);
  };
  auto s1 = snapshot_of(lb, nullptr);
  std::string error;
  auto key = dnssec::load_key_file(key_file(dnssec::algorithm_ecdsap256sha256), 13, error);
  ASSERT_TRUE(key) << error;
  const auto apex = *text_to_wire("example.com.");
  worker_counters c;
  query_processor p(lookup_settings{}, c, nullptr, nullptr, 3);
  auto ask = [&](const snapshot_ptr& s, uint16_t type) {
    test::query_spec q = test::spec("example.com", type);
    q.edns = q.dnssec_ok = true;
    return test::parse_message(answer(p, s, q, 1'795'953'600'000));
  };
  auto check = [&](const snapshot_ptr& s, size_t addresses) {
    auto m = ask(s, 1);
    ASSERT_TRUE(m);
    std::vector<test::record> a, sigs;
    for (const auto& r : m->answers)
      (r.type == 46 ? sigs : a).push_back(r);
    ASSERT_EQ(a.size(), addresses);
    ASSERT_EQ(sigs.size(), 1u);
    EXPECT_EQ(a[0].type, 1);
    EXPECT_EQ(a[0].ttl, 60u) << "the target's TTL";
    EXPECT_TRUE(verify(*key, apex, sigs[0], a, apex));
  };
  check(s1, 2);
  // The resolver moved the target: the new RRset gets its own signature
  // (the cache is keyed by the RRset, not by the record).
  lb.a = {*ip_address::parse("192.0.2.12")};
  check(snapshot_of(lb, s1->aliases.get()), 1);
  // No AAAA: a signed NODATA whose NSEC lists A (the ALIAS answers it) but not AAAA.
  auto six = ask(s1, 28);
  ASSERT_TRUE(six);
  EXPECT_TRUE(six->answers.empty());
  bool nsec = false;
  for (const auto& r : six->authority)
    if (r.type == 47) {
      nsec = true;
      // Window 0: type 1 (A) is bit 1 of octet 0; 28 (AAAA) bit 4 of octet 3.
      const size_t at = 2 + apex.size(); // next name \000.apex
      const uint8_t octets = r.rdata[at + 1];
      ASSERT_GE(octets, 1);
      EXPECT_TRUE(r.rdata[at + 2] & 0x40) << "A listed";
      EXPECT_FALSE(octets >= 4 && (r.rdata[at + 2 + 3] & 0x08)) << "AAAA not listed";
    }
  EXPECT_TRUE(nsec);
}

TEST(dnssec, a_policy_nodata_signs_its_soa_and_nsec_with_the_records_ttl) {
  // full.yaml signed, plus lan-only (ttl 20): answers 10.0.0.0/8, NODATA to
  // everyone else. Its SOA, NSEC and both RRSIGs (original TTL included)
  // say 20 s, so no validator caches the denial longer than the record.
  const std::string file = gtmesh::test::source_dir() + "/configs/full.yaml";
  std::string text = read(file);
  const std::string zone_line = "  - name: example.com\n";
  text.insert(text.find(zone_line) + zone_line.size(),
              "    dnssec: {algorithm: 13, key: " + key_file(dnssec::algorithm_ecdsap256sha256) + "}\n");
  const std::string sip = "      - {name: _sip._tcp,";
  text.insert(text.find(sip), "      - {name: lan-only, type: A, ttl: 20, profile: lan-only}\n");
  text += "  - name: lan-only\n    method: subnet\n    endpoints:\n"
          "      - {name: lan, kind: external, target: 10.10.0.11, subnets: [10.0.0.0/8]}\n";
  load_result loaded = load_config_text(text, file, routing_methods());
  ASSERT_TRUE(loaded.ok()) << loaded.report();
  compile_result compiled = compile_plan(loaded.cfg, 3);
  ASSERT_TRUE(compiled.plan) << compiled.error;
  const int64_t now = 1'795'953'600'000;
  snapshot_ptr snap = make_snapshot(compiled.plan, empty_view(*compiled.plan), now, 1);
  worker_counters c;
  query_processor p(lookup_settings{}, c, nullptr, nullptr, 5);
  test::query_spec q = test::spec("lan-only.example.com", 1);
  q.edns = q.dnssec_ok = true;
  auto m = test::parse_message(answer(p, snap, q, now)); // from 198.51.100.7: no subnet matches
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->answers.empty());
  std::vector<test::record> nsec, nsec_sig;
  int soa_ttl = -1, soa_sig_ttl = -1;
  for (const auto& r : m->authority) {
    const uint16_t covered = r.type == 46 ? static_cast<uint16_t>(r.rdata[0] << 8 | r.rdata[1]) : 0;
    const uint32_t original = r.type == 46 ? uint32_t(r.rdata[4]) << 24 | uint32_t(r.rdata[5]) << 16 |
                                               uint32_t(r.rdata[6]) << 8 | r.rdata[7]
                                           : r.ttl;
    EXPECT_EQ(r.ttl, 20u) << "type " << r.type;
    EXPECT_EQ(original, 20u) << "RRSIG original TTL, covering " << covered;
    if (r.type == 6)
      soa_ttl = static_cast<int>(r.ttl);
    if (covered == 6)
      soa_sig_ttl = static_cast<int>(original);
    if (r.type == 47)
      nsec.push_back(r);
    if (covered == 47)
      nsec_sig.push_back(r);
  }
  EXPECT_EQ(soa_ttl, 20);
  EXPECT_EQ(soa_sig_ttl, 20);
  ASSERT_EQ(nsec.size(), 1u);
  ASSERT_EQ(nsec_sig.size(), 1u);
  std::string error;
  auto key = dnssec::load_key_file(key_file(dnssec::algorithm_ecdsap256sha256), 13, error);
  ASSERT_TRUE(key) << error;
  EXPECT_TRUE(verify(*key, *text_to_wire("example.com."), nsec_sig[0], nsec, *text_to_wire("lan-only.example.com.")));
  // A type the name lacks is no policy's NODATA: the zone's negative TTL (60 s).
  auto aaaa = test::parse_message(answer(p, snap, [] {
    test::query_spec s = test::spec("lan-only.example.com", 28);
    s.edns = s.dnssec_ok = true;
    return s;
  }(), now));
  ASSERT_TRUE(aaaa);
  for (const auto& r : aaaa->authority)
    EXPECT_EQ(r.ttl, 60u) << "type " << r.type;
}

TEST(dnssec, the_signature_cache_hits_for_the_same_rrset_and_bounds_itself_with_counted_evictions) {
  full_config f = load_full();
  const auto& keys = *f.signed_snapshot->plan->zones[0].keys;
  dnssec::rrset_signer signer(8);
  const uint8_t addr[4] = {192, 0, 2, 1};
  auto sign_name = [&](int i, uint32_t at) {
    const uint32_t now = 1'795'953'600 + at;
    auto owner = *text_to_wire("n" + std::to_string(i) + ".example.com.");
    signer.begin(keys, owner, 1, 30);
    signer.add_rdata(addr);
    return signer.finish(now);
  };
  const dnssec::signature* first = sign_name(0, 1000);
  ASSERT_TRUE(first);
  auto bytes0 = first->bytes;
  EXPECT_EQ(sign_name(0, 1001)->bytes, bytes0) << "a hit returns the same signature";
  EXPECT_EQ(signer.counters().made, 1u);
  EXPECT_EQ(signer.counters().hits, 1u);
  for (int i = 1; i < 100; ++i)
    ASSERT_TRUE(sign_name(i, 1002));
  EXPECT_EQ(signer.counters().made, 100u);
  EXPECT_GT(signer.counters().evictions, 80u) << "8 entries hold at most 8 of 100 RRsets";
  // After refresh (a day by default) a cached signature is made again.
  sign_name(99, 1003);
  const uint64_t made = signer.counters().made;
  sign_name(99, 1003 + 86400);
  EXPECT_EQ(signer.counters().made, made + 1);
}

TEST(dnssec, a_key_of_another_algorithm_or_a_ds_that_does_not_match_is_a_config_error_naming_the_file) {
  std::string error;
  EXPECT_FALSE(dnssec::load_key_file(key_file(dnssec::algorithm_ed25519), 13, error));
  EXPECT_NE(error.find("k15.pem: not a key of algorithm ecdsap256sha256"), std::string::npos) << error;
  zone z;
  z.name = "example.com.";
  z.dnssec.enabled = true;
  z.dnssec.key = key_file(13);
  z.dnssec.ds = {std::string(64, 'a')};
  EXPECT_FALSE(dnssec::load_zone_keys(z, error));
  EXPECT_NE(error.find("matches none of the DS digests"), std::string::npos) << error;
  z.dnssec.key = "/nonexistent/key.pem";
  EXPECT_FALSE(dnssec::load_zone_keys(z, error));
  EXPECT_NE(error.find("dnssec.key: /nonexistent/key.pem: No such file"), std::string::npos) << error;
}

TEST(dnssec, key_tag_follows_rfc_4034_appendix_b) {
  // Hand-computed: 16-bit big-endian words summed, the carry folded once.
  const uint8_t rdata[] = {0x01, 0x01, 0x03, 0x05};
  EXPECT_EQ(dnssec::key_tag(rdata), 0x0406);
  const uint8_t carry[] = {0xff, 0xff, 0x00, 0x02};
  EXPECT_EQ(dnssec::key_tag(carry), static_cast<uint16_t>(0xffff + 0x0002 + 1));
}

} // namespace
} // namespace gtmesh::dns

namespace gtmesh::dns {
namespace {

/// RFC 4034 6.1 canonical order, written out here from the RFC: labels
/// compared right to left as lowercased octet strings, an absent label first.
int canonical_compare(const bytes& a, const bytes& b) {
  auto labels = [](const bytes& n) {
    std::vector<bytes> out;
    for (size_t i = 0; i < n.size() && n[i] != 0; i += 1 + n[i]) {
      bytes l(n.begin() + static_cast<std::ptrdiff_t>(i) + 1, n.begin() + static_cast<std::ptrdiff_t>(i) + 1 + n[i]);
      for (auto& c : l)
        c = static_cast<uint8_t>(std::tolower(c));
      out.push_back(l);
    }
    return std::vector<bytes>(out.rbegin(), out.rend());
  };
  const auto la = labels(a), lb = labels(b);
  for (size_t i = 0; i < std::min(la.size(), lb.size()); ++i)
    if (la[i] != lb[i])
      return la[i] < lb[i] ? -1 : 1;
  return la.size() == lb.size() ? 0 : la.size() < lb.size() ? -1 : 1;
}

bytes to_bytes(const std::array<uint8_t, 255>& a, size_t n) { return bytes(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n)); }

} // namespace

TEST(dnssec, a_wildcard_proof_covers_the_next_closer_name_and_everything_below_it_and_no_name_beside_it) {
  std::array<uint8_t, 255> before{}, after{};
  const std::string long_label(63, 'q');
  for (const char* text : {"b.wild.example.com.", "Mixed.WILD.example.com.", "\\091.wild.example.com.", "a.example.",
                           "63 octets"}) {
    // A first label of 63 octets: its successor increases the last octet.
    const std::string t = std::string(text) == "63 octets" ? long_label + ".wild.example.com." : text;
    const bytes name = *text_to_wire(t);
    SCOPED_TRACE(t);
    const size_t nb = dnssec::covering_predecessor(name, before);
    const size_t na = dnssec::covering_successor(name, after);
    ASSERT_GT(nb, 0u);
    ASSERT_GT(na, 0u);
    const bytes p = to_bytes(before, nb), s = to_bytes(after, na);
    EXPECT_LT(canonical_compare(p, name), 0);
    EXPECT_GT(canonical_compare(s, name), 0);
    // Every name below it is covered too.
    const bytes child = *text_to_wire("zzz.a." + t);
    EXPECT_GT(canonical_compare(child, p), 0);
    EXPECT_LT(canonical_compare(child, s), 0);
    // The names beside it are not: the parent's wildcard, and the
    // neighbours one octet away in the first label.
    bytes wildcard = *text_to_wire(std::string("*") + t.substr(t.find('.')));
    EXPECT_FALSE(canonical_compare(wildcard, p) > 0 && canonical_compare(wildcard, s) < 0);
    bytes lower = name, higher = name;
    lower[name[0]] = static_cast<uint8_t>(std::tolower(lower[name[0]]) - 1);
    EXPECT_FALSE(canonical_compare(lower, p) > 0 && canonical_compare(lower, s) < 0);
    higher[name[0]] = static_cast<uint8_t>(std::tolower(higher[name[0]]) + 1);
    EXPECT_FALSE(canonical_compare(higher, p) > 0 && canonical_compare(higher, s) < 0);
    // Canonical names hold no upper-case octet.
    for (uint8_t c : p)
      EXPECT_FALSE(c >= 'A' && c <= 'Z');
  }
  // A first label ending in \000 has no predecessor made here.
  EXPECT_EQ(dnssec::covering_predecessor(*text_to_wire("a\\000.example."), before), 0u);
  // A first label that cannot be padded gets a child label instead:
  // unpadded, the owner could be a real name, which the NSEC would deny.
  const bytes long_name = *text_to_wire(long_label + ".x.");
  const size_t nl = dnssec::covering_predecessor(long_name, before);
  ASSERT_GT(nl, long_name.size());
  EXPECT_EQ(before[0], 63);
  bytes decreased = long_name;
  decreased[63] = 'p';
  EXPECT_LT(canonical_compare(decreased, to_bytes(before, nl)), 0);
  // A name of 255 octets has no room for one.
  std::string full = "b";
  while (full.size() + 64 < 253)
    full += "." + long_label;
  full += "." + std::string(253 - full.size() - 1, 'r') + ".";
  const bytes full_name = *text_to_wire(full);
  ASSERT_EQ(full_name.size(), 255u);
  EXPECT_EQ(dnssec::covering_predecessor(full_name, before), 0u);
  // Nor a first label of 63 octets ending in \255 a successor.
  EXPECT_EQ(dnssec::covering_successor(*text_to_wire(long_label.substr(1) + "\\255.x."), after), 0u);
}

TEST(dnssec, a_cname_loop_through_a_wildcard_proves_each_name_once) {
  // *.loop answers x.loop, which the wildcard answers again: every link
  // after the first has the same next closer name, proven by one NSEC.
  const std::string text = "datacenters: [{name: fra}]\nzones:\n  - name: example.com\n    dnssec: {algorithm: 13, key: " +
                           key_file(dnssec::algorithm_ecdsap256sha256) +
                           "}\n    soa: {primary: ns1.example.com., admin: h.example.com.}\n"
                           "    ns: [ns1.example.com.]\n    records:\n"
                           "      - {name: ns1, type: A, answers: [192.0.2.53]}\n"
                           "      - {name: \"*.loop\", type: CNAME, answers: [x.loop.example.com.]}\n";
  load_result loaded = load_config_text(text, "loop.yaml", routing_methods());
  ASSERT_TRUE(loaded.ok()) << loaded.report();
  compile_result compiled = compile_plan(loaded.cfg, 1);
  ASSERT_TRUE(compiled.plan) << compiled.error;
  const int64_t now = 1'795'953'600'000;
  state_load_result st = load_state_text("{}\n", "empty.yaml", *compiled.plan, now);
  ASSERT_TRUE(st.view);
  const snapshot_ptr snap = make_snapshot(compiled.plan, st.view, now, 1);
  worker_counters c;
  query_processor p(lookup_settings{}, c, nullptr, nullptr, 1);
  test::query_spec q = test::spec("a.loop.example.com", 1);
  q.edns = q.dnssec_ok = true;
  auto m = test::parse_message(answer(p, snap, q, now));
  ASSERT_TRUE(m);
  size_t cnames = 0;
  for (const auto& r : m->answers)
    cnames += r.type == 5;
  EXPECT_EQ(cnames, size_t(lookup_settings{}.max_cname_chain) + 1); // the first link and max_cname_chain more
  std::vector<std::string> nsec_owners;
  for (const auto& r : m->authority)
    if (r.type == 47)
      nsec_owners.push_back(r.owner);
  ASSERT_EQ(nsec_owners.size(), 2u); // a.loop and x.loop
  EXPECT_NE(nsec_owners[0], nsec_owners[1]);
}

} // namespace gtmesh::dns

namespace gtmesh::dns {

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  auto d = std::filesystem::temp_directory_path() / ("gtmesh-bind-keys-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  const std::string path = (d / name).string();
  std::ofstream(path) << text;
  return path;
}

} // namespace

TEST(dnssec, bind_private_key_files_give_the_rfc_examples_keys_and_tags) {
  // RFC 6605 6.1 and RFC 8080 6 (example 1): private keys in BIND's format
  // with the DNSKEY and key tag the RFCs print.
  struct example {
    uint8_t algorithm;
    const char* private_key;
    const char* dnskey;
    uint16_t tag;
  };
  const example examples[] = {
    {13, "GU6SnQ/Ou+xC5RumuIUIuJZteXT2z0O/ok1s38Et6mQ=",
     "example.net. 3600 IN DNSKEY 257 3 13 GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==",
     55648},
    {15, "ODIyNjAzODQ2MjgwODAxMjI2NDUxOTAyMDQxNDIyNjI=",
     "example.net. 3600 IN DNSKEY 257 3 15 l02Woi0iS8Aa25FQkUd9RMzZHJpBoRQwAQEX1SxZJA4=", 3613},
  };
  for (const example& e : examples) {
    const std::string path = write_file("Kexample.net.+0" + std::to_string(e.algorithm) + ".private",
                                        "Private-key-format: v1.3\nAlgorithm: " + std::to_string(e.algorithm) +
                                          " (X)\nPrivateKey: " + e.private_key + "\n");
    std::string error;
    auto k = dnssec::load_key_file(path, e.algorithm, error);
    ASSERT_TRUE(k) << error;
    EXPECT_EQ(dnssec::dnskey_record("example.net.", *k, 3600), e.dnskey);
    EXPECT_EQ(k->tag, e.tag);
    // The other algorithm named in the config: an error naming the file.
    EXPECT_FALSE(dnssec::load_key_file(path, e.algorithm == 13 ? 15 : 13, error));
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_NE(error.find("a BIND key of algorithm " + std::to_string(e.algorithm)), std::string::npos) << error;
  }
  // The .key beside it gives the flags (a ZSK here): the tag follows them.
  const std::string zsk = write_file("Kzsk.+013.private", "Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\n"
                                                          "PrivateKey: GU6SnQ/Ou+xC5RumuIUIuJZteXT2z0O/ok1s38Et6mQ=\n");
  write_file("Kzsk.+013.key", "; a comment\nexample.net. IN DNSKEY 256 3 13 GojIhhXU...\n");
  std::string error;
  auto k = dnssec::load_key_file(zsk, 13, error);
  ASSERT_TRUE(k) << error;
  EXPECT_EQ((k->dnskey_rdata[0] << 8) | k->dnskey_rdata[1], 256);
  EXPECT_EQ(k->tag, 55648 - 1); // flags 256 instead of 257: the checksum one lower
  // BIND drops an ECDSA scalar's leading zero bytes (1 key in 256): 31
  // bytes are the same key as those 31 after a zero byte.
  const std::string short_scalar =
    write_file("Kshort.+013.private", "Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\n"
                                       "PrivateKey: AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHw==\n");
  const std::string padded_scalar =
    write_file("Kpadded.+013.private", "Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\n"
                                        "PrivateKey: AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n");
  auto short_key = dnssec::load_key_file(short_scalar, 13, error);
  ASSERT_TRUE(short_key) << error;
  auto padded_key = dnssec::load_key_file(padded_scalar, 13, error);
  ASSERT_TRUE(padded_key) << error;
  EXPECT_EQ(dnssec::dnskey_record("example.net.", *short_key, 3600),
            dnssec::dnskey_record("example.net.", *padded_key, 3600));
  // Not for Ed25519, whose private key is a fixed 32-byte string.
  const std::string short_ed =
    write_file("Kshort.+015.private", "Private-key-format: v1.3\nAlgorithm: 15 (ED25519)\n"
                                       "PrivateKey: AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHw==\n");
  EXPECT_FALSE(dnssec::load_key_file(short_ed, 15, error));
  EXPECT_NE(error.find("not 32 bytes"), std::string::npos) << error;
  // A broken PrivateKey line is named.
  // "====" is all padding: an error, not a length wrapped below zero.
  for (const char* bad : {"PrivateKey: GU6SnQ\n", "PrivateKey: !!!!\n", "PrivateKey: ====\n",
                          "PrivateKey: A===\n", ""}) {
    const std::string p = write_file("Kbad.private", std::string("Private-key-format: v1.3\nAlgorithm: 13\n") + bad);
    EXPECT_FALSE(dnssec::load_key_file(p, 13, error)) << bad;
    EXPECT_NE(error.find(p + ": PrivateKey: "), std::string::npos) << error;
  }
}

} // namespace gtmesh::dns
