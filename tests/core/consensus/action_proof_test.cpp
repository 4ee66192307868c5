// core/consensus/action_proof: who did an operator action, proven. A
// signature is checked against the cluster CA, the operator role, the
// certificate's validity at the time of signing and the revocations
// committed before it; a vouch names the decider that authenticated the
// client; the signed-only policy refuses vouched actions. The verdict is
// the state machine's, so replay and a restored snapshot reach the same.
//
// The certificates are made here with OpenSSL (a CA, operators, a decider,
// a stranger from another CA), in a temporary folder.

#include "core/consensus/action_proof.hpp"
#include "core/consensus/replicated_state.hpp"
#include "core/mesh/certificate_identity.hpp"

#include <gtest/gtest.h>

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>

namespace gtmesh::consensus {
namespace {

constexpr int64_t day_ms = 86'400'000;

EVP_PKEY* new_key() {
  return EVP_EC_gen("P-256");
}

struct issued {
  std::string cert_file, key_file, serial;
};

/// A certificate for `name` with a gtmesh role URI, signed by `ca` (self-signed
/// when ca_cert is null), valid from `not_before_s` for `days`.
X509* make_cert(const std::string& name, const std::string& role_uri, EVP_PKEY* key, X509* ca_cert, EVP_PKEY* ca_key,
                long serial, long not_before_s, long days) {
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
  X509_gmtime_adj(X509_getm_notBefore(x), not_before_s);
  X509_gmtime_adj(X509_getm_notAfter(x), not_before_s + days * 86400);
  X509_set_pubkey(x, key);
  X509_NAME* n = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  X509_set_issuer_name(x, ca_cert ? X509_get_subject_name(ca_cert) : n);
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, ca_cert ? ca_cert : x, x, nullptr, nullptr, 0);
  if (!ca_cert) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, NID_basic_constraints, "critical,CA:TRUE");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  } else if (!role_uri.empty()) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, ("URI:" + role_uri).c_str());
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(x, ca_key ? ca_key : key, EVP_sha256());
  return x;
}

void write_pem(const std::string& file, X509* cert) {
  FILE* f = std::fopen(file.c_str(), "w");
  PEM_write_X509(f, cert);
  std::fclose(f);
}

void write_key(const std::string& file, EVP_PKEY* key) {
  FILE* f = std::fopen(file.c_str(), "w");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
}

class action_proof_test : public ::testing::Test {
public:
  std::string dir;
  EVP_PKEY* ca_key = nullptr;
  X509* ca = nullptr;
  std::shared_ptr<const action_trust> trust;
  long next_serial = 100;

  void SetUp() override {
    dir = ::testing::TempDir() + "action_proof_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    ca_key = new_key();
    ca = make_cert("test CA", "", ca_key, nullptr, nullptr, 1, -3650L * 86400, 7300);
    write_pem(dir + "/ca.pem", ca);
    std::string error;
    trust = action_trust::load(dir + "/ca.pem", error);
    ASSERT_TRUE(trust) << error;
  }
  void TearDown() override {
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    std::filesystem::remove_all(dir);
  }

  /// A certificate of this CA (or of `other_ca`) with its key, in files.
  issued issue(const std::string& name, const std::string& role_uri, long not_before_s = -86400, long days = 365,
               X509* other_ca = nullptr, EVP_PKEY* other_key = nullptr) {
    EVP_PKEY* key = new_key();
    X509* cert =
      make_cert(name, role_uri, key, other_ca ? other_ca : ca, other_ca ? other_key : ca_key, next_serial++, not_before_s,
                days);
    issued out{dir + "/" + name + ".pem", dir + "/" + name + ".key", mesh::serial_of_certificate(cert)};
    write_pem(out.cert_file, cert);
    write_key(out.key_file, key);
    X509_free(cert);
    EVP_PKEY_free(key);
    return out;
  }

  log_entry drain(const std::string& dc, uint64_t push_id) {
    log_entry e;
    e.kind = entry_kind::drain;
    e.dc = dc;
    e.drained = true;
    e.by = "whatever the proposer wrote";
    e.push_id = push_id;
    return e;
  }

  /// `e` signed with `who`'s key at `at_ms`.
  log_entry signed_by(log_entry e, const issued& who, int64_t at_ms) {
    std::string error;
    auto sig = sign_action(entry_action_fields(e), who.cert_file, who.key_file, at_ms, error);
    EXPECT_TRUE(sig) << error;
    if (sig)
      e.signature = *sig;
    return e;
  }

  static int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
  }

  replicated_state state() {
    replicated_state s;
    s.set_trust(trust);
    return s;
  }
};

TEST_F(action_proof_test, a_signed_drain_is_applied_under_the_signing_operators_name_not_the_one_it_claims) {
  auto alice = issue("alice", "gtmesh:operator");
  auto s = state();
  auto r = s.apply(signed_by(drain("iad", 7), alice, now_ms()), 1);
  EXPECT_EQ(r.unproven, "");
  ASSERT_EQ(s.drains().count("iad"), 1u);
  EXPECT_EQ(s.drains().at("iad").by, "alice (signed)");
}

TEST_F(action_proof_test, a_signature_over_another_action_is_refused_and_changes_nothing) {
  auto alice = issue("alice", "gtmesh:operator");
  auto e = signed_by(drain("iad", 7), alice, now_ms());
  e.dc = "fra"; // altered after signing
  auto s = state();
  auto r = s.apply(e, 1);
  EXPECT_TRUE(r.ignored);
  EXPECT_NE(r.unproven.find("does not match the action"), std::string::npos) << r.unproven;
  EXPECT_TRUE(s.drains().empty());
  e = signed_by(drain("iad", 7), alice, now_ms());
  e.push_id = 8; // a retry id of another action
  EXPECT_NE(s.apply(e, 2).unproven, "");
}

TEST_F(action_proof_test, only_an_operator_certificate_of_the_cluster_ca_proves_an_operator) {
  auto decider = issue("decider2", "gtmesh:decider");
  auto agent = issue("fra-agent", "gtmesh:agent:fra");
  auto no_role = issue("nobody", "");
  EVP_PKEY* other_key = new_key();
  X509* other_ca = make_cert("another CA", "", other_key, nullptr, nullptr, 1, -86400, 365);
  auto stranger = issue("mallory", "gtmesh:operator", -86400, 365, other_ca, other_key);
  auto s = state();
  EXPECT_NE(s.apply(signed_by(drain("iad", 1), decider, now_ms()), 1).unproven.find("not an operator's"),
            std::string::npos);
  EXPECT_NE(s.apply(signed_by(drain("iad", 2), agent, now_ms()), 2).unproven.find("not an operator's"),
            std::string::npos);
  EXPECT_NE(s.apply(signed_by(drain("iad", 3), no_role, now_ms()), 3).unproven.find("not an operator's"),
            std::string::npos);
  EXPECT_NE(s.apply(signed_by(drain("iad", 4), stranger, now_ms()), 4).unproven.find("not of the cluster CA"),
            std::string::npos);
  EXPECT_TRUE(s.drains().empty());
  X509_free(other_ca);
  EVP_PKEY_free(other_key);
}

TEST_F(action_proof_test, validity_is_judged_at_the_time_of_signing) {
  // Valid from 30 days ago for 10 days: expired now.
  auto old = issue("alice", "gtmesh:operator", -30L * 86400, 10);
  auto s = state();
  const int64_t then = now_ms() - 25 * day_ms;
  EXPECT_EQ(s.apply(signed_by(drain("iad", 1), old, then), 1).unproven, "")
    << "signed while the certificate was valid: proven, however late it is checked";
  auto r = s.apply(signed_by(drain("fra", 2), old, now_ms()), 2);
  EXPECT_NE(r.unproven.find("certificate has expired"), std::string::npos) << r.unproven;
}

TEST_F(action_proof_test, a_revocation_counts_from_its_place_in_the_log_on) {
  auto alice = issue("alice", "gtmesh:operator");
  auto bob = issue("bob", "gtmesh:operator");
  auto s = state();
  auto before = signed_by(drain("iad", 1), alice, now_ms());
  auto after = signed_by(drain("fra", 2), alice, now_ms());
  EXPECT_EQ(s.apply(before, 1).unproven, "");
  log_entry revoke;
  revoke.kind = entry_kind::revoke;
  revoke.serial = alice.serial;
  revoke.subject = "alice (operator)";
  revoke.push_id = 3;
  revoke = signed_by(revoke, bob, now_ms());
  EXPECT_EQ(s.apply(revoke, 2).unproven, "");
  EXPECT_EQ(s.revoked().at(alice.serial).by, "bob (signed)");
  auto r = s.apply(after, 3);
  EXPECT_NE(r.unproven.find("was revoked before this action"), std::string::npos) << r.unproven;
  EXPECT_TRUE(s.drains().at("iad").drained) << "what alice did before stays done";
  EXPECT_EQ(s.drains().count("fra"), 0u);
}

TEST_F(action_proof_test, a_vouch_names_the_client_and_the_decider_whose_listener_authenticated_it) {
  auto s = state();
  log_entry e = drain("iad", 5);
  e.vouched_client = "alice";
  e.vouched_via = "HTTPS listener (console)";
  e.vouched_by = "decider2";
  EXPECT_EQ(s.apply(e, 1).unproven, "");
  EXPECT_EQ(s.drains().at("iad").by, "alice, authenticated by decider2's HTTPS listener (console)");
  log_entry plain = drain("fra", 6);
  plain.vouched_client = "unauthenticated loopback client 127.0.0.1";
  plain.vouched_via = "plain HTTP listener (console)";
  plain.vouched_by = "decider1";
  EXPECT_EQ(s.apply(plain, 2).unproven, "");
  EXPECT_EQ(s.drains().at("fra").by,
            "unauthenticated loopback client 127.0.0.1, admitted by decider1's plain HTTP listener (console)");
  log_entry nobody = drain("sin", 7);
  nobody.vouched_client = "alice";
  nobody.vouched_via = "HTTPS listener (console)";
  EXPECT_NE(s.apply(nobody, 3).unproven, "") << "a vouch no decider gave";
}

TEST_F(action_proof_test, the_signed_only_policy_refuses_vouched_actions_and_is_changed_by_signed_ones_only) {
  auto alice = issue("alice", "gtmesh:operator");
  auto s = state();
  log_entry on;
  on.kind = entry_kind::policy;
  on.signed_only = true;
  on.push_id = 10;
  EXPECT_NE(s.apply(on, 1).unproven, "") << "an unsigned policy";
  EXPECT_FALSE(s.signed_only());
  EXPECT_EQ(s.apply(signed_by(on, alice, now_ms()), 2).unproven, "");
  EXPECT_TRUE(s.signed_only());
  EXPECT_TRUE(s.view()->signed_only);
  EXPECT_EQ(s.view()->signed_only_by, "alice (signed)");
  log_entry vouched = drain("iad", 11);
  vouched.vouched_client = "alice";
  vouched.vouched_via = "HTTPS listener (console)";
  vouched.vouched_by = "decider2";
  EXPECT_NE(s.apply(vouched, 3).unproven.find("signed-only"), std::string::npos);
  log_entry legacy = drain("iad", 12); // no proof at all (written before proofs)
  EXPECT_NE(s.apply(legacy, 4).unproven.find("signed-only"), std::string::npos);
  EXPECT_TRUE(s.drains().empty());
  EXPECT_EQ(s.apply(signed_by(drain("iad", 13), alice, now_ms()), 5).unproven, "");
  log_entry view; // the leader's own: no operator to sign it (its forwarding is refused: validate_forwarded)
  view.kind = entry_kind::zone_view;
  view.zone = "demo.example.";
  view.view_generation = 1;
  EXPECT_EQ(s.apply(view, 6).unproven, "") << "a zone's committed view is not an operator's action";
  log_entry off = on;
  off.signed_only = false;
  off.push_id = 14;
  EXPECT_EQ(s.apply(signed_by(off, alice, now_ms()), 7).unproven, "");
  EXPECT_EQ(s.apply(vouched, 8).unproven, "");
}

TEST_F(action_proof_test, replay_and_a_restored_snapshot_reach_the_same_verdicts) {
  auto alice = issue("alice", "gtmesh:operator");
  auto bob = issue("bob", "gtmesh:operator");
  log_entry on;
  on.kind = entry_kind::policy;
  on.signed_only = true;
  on.push_id = 20;
  log_entry revoke;
  revoke.kind = entry_kind::revoke;
  revoke.serial = alice.serial;
  revoke.push_id = 21;
  log_entry vouched = drain("sin", 23);
  vouched.vouched_client = "carol";
  vouched.vouched_via = "HTTPS listener (API)";
  vouched.vouched_by = "decider3";
  std::vector<log_entry> log = {signed_by(drain("iad", 19), alice, now_ms()), signed_by(on, bob, now_ms()),
                                signed_by(revoke, bob, now_ms()), signed_by(drain("fra", 22), alice, now_ms()),
                                vouched, signed_by(drain("ams", 24), bob, now_ms())};
  auto replay = [&](replicated_state& s, size_t from) {
    std::vector<std::string> verdicts;
    for (size_t i = from; i < log.size(); ++i)
      verdicts.push_back(s.apply(log[i], i + 1).unproven);
    return verdicts;
  };
  auto first = state();
  auto all = replay(first, 0);
  auto second = state();
  EXPECT_EQ(replay(second, 0), all);
  // A new member catches up from a snapshot taken after the policy.
  auto leader = state();
  for (size_t i = 0; i < 2; ++i)
    leader.apply(log[i], i + 1);
  auto bytes = leader.snapshot();
  auto member = state();
  ASSERT_TRUE(member.restore(bytes.data(), bytes.size()));
  EXPECT_TRUE(member.signed_only());
  auto rest = replay(member, 2);
  EXPECT_EQ(rest, std::vector<std::string>(all.begin() + 2, all.end()));
  EXPECT_EQ(member.snapshot(), first.snapshot());
  EXPECT_EQ(all[0], "");
  EXPECT_NE(all[3], "") << "alice, revoked before it";
  EXPECT_NE(all[4], "") << "vouched, under signed-only";
  EXPECT_EQ(all[5], "");
}

// Replays are judged by the log, the same on every decider, whatever their
// clocks say (a decider with its clock an hour off still applies them alike).
TEST_F(action_proof_test, a_replayed_signature_is_refused_by_the_log_not_by_a_clock) {
  auto alice = issue("alice", "gtmesh:operator");
  auto bob = issue("bob", "gtmesh:operator");
  const int64_t t = now_ms();
  auto drain_iad = signed_by(drain("iad", 30), alice, t);
  log_entry undrain = drain("iad", 31);
  undrain.drained = false;
  auto s = state();
  EXPECT_EQ(s.apply(drain_iad, 1).unproven, "");
  EXPECT_EQ(s.apply(signed_by(undrain, alice, t + 1000), 2).unproven, "");
  // The same entry again: while its push id is remembered, a retry (a
  // duplicate, changing nothing); once the push ids have moved on, a
  // replay, refused.
  auto r = s.apply(drain_iad, 3);
  EXPECT_TRUE(r.duplicate);
  EXPECT_EQ(r.unproven, "");
  EXPECT_FALSE(s.drains().at("iad").drained) << "the undrain holds";
  for (uint64_t i = 0; i < replicated_state::push_ids_kept; ++i) {
    log_entry other = drain("sin", 1000 + i);
    other.vouched_client = "carol";
    other.vouched_via = "HTTPS listener (API)";
    other.vouched_by = "decider3";
    s.apply(other, 3);
  }
  r = s.apply(drain_iad, 3);
  EXPECT_TRUE(r.ignored);
  EXPECT_NE(r.unproven.find("already in the log"), std::string::npos) << r.unproven;
  EXPECT_FALSE(s.drains().at("iad").drained) << "the undrain holds";
  // A signature of alice's made over 300 s before her newest action: refused.
  auto old = signed_by(drain("fra", 32), alice, t - signature_freshness_ms - 5000);
  EXPECT_NE(s.apply(old, 4).unproven.find("before alice's newest action"), std::string::npos);
  EXPECT_EQ(s.drains().count("fra"), 0u);
  // Within the window, and another operator's own history: applied.
  EXPECT_EQ(s.apply(signed_by(drain("fra", 33), alice, t - 200'000), 5).unproven, "");
  EXPECT_EQ(s.apply(signed_by(drain("ams", 34), bob, t - 400'000), 6).unproven, "");
  // Carol's first action, signed over 600 s before the newest in the log:
  // refused (no certificate's first action escapes the time rules).
  auto carol = issue("carol", "gtmesh:operator");
  auto carol_old = signed_by(drain("lhr", 35), carol, t - 3'600'000);
  EXPECT_NE(s.apply(carol_old, 6).unproven.find("before the newest signed action in the log"), std::string::npos);
  EXPECT_EQ(s.newest_signed_at(alice.serial), t + 1000);
  // A member restored from a snapshot judges the next replay alike.
  auto bytes = s.snapshot();
  auto member = state();
  ASSERT_TRUE(member.restore(bytes.data(), bytes.size()));
  EXPECT_NE(member.apply(drain_iad, 7).unproven.find("already in the log"), std::string::npos);
  EXPECT_NE(member.apply(old, 8).unproven.find("before alice's newest action"), std::string::npos);
  s.apply(drain_iad, 7);
  s.apply(old, 8);
  EXPECT_EQ(member.snapshot(), s.snapshot());
}

TEST_F(action_proof_test, without_a_cluster_ca_no_signature_holds) {
  auto alice = issue("alice", "gtmesh:operator");
  replicated_state plain; // plain mode: no CA
  auto r = plain.apply(signed_by(drain("iad", 1), alice, now_ms()), 1);
  EXPECT_NE(r.unproven.find("no cluster CA"), std::string::npos) << r.unproven;
}

TEST_F(action_proof_test, an_entry_with_a_proof_round_trips_as_format_3) {
  auto alice = issue("alice", "gtmesh:operator");
  auto e = signed_by(drain("iad", 1), alice, now_ms());
  auto bytes = encode(e);
  log_entry back;
  ASSERT_TRUE(decode(bytes.data(), bytes.size(), back));
  EXPECT_EQ(back.signature, e.signature);
  EXPECT_EQ(encode(back), bytes);
  log_entry old = drain("iad", 2);
  auto old_bytes = encode(old);
  EXPECT_EQ(newer_entry_format(old_bytes.data(), old_bytes.size()), 0u);
  // An entry this build reads, but a 0.1.0 build (format 1) would not.
  EXPECT_NE(bytes, old_bytes);
}

TEST(signed_text, fields_are_escaped_so_no_two_actions_sign_the_same_text) {
  EXPECT_NE(signed_text({"a\nb", "c"}), signed_text({"a", "b\nc"}));
  EXPECT_NE(signed_text({"a\\", "nb"}), signed_text({"a\\nb"}));
  EXPECT_EQ(signed_text({}), "gtmesh signed action 1");
}

} // namespace
} // namespace gtmesh::consensus
