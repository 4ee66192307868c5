#include "tools/gtmeshctl/dnssec_command.hpp"

#include "core/config/config_loader.hpp"
#include "core/dns/wire/name.hpp"
#include "core/dns/lookup/denial_types.hpp"
#include "core/dns/lookup/response_writer.hpp"
#include "core/dnssec/covering_name.hpp"
#include "core/dnssec/rrset_signer.hpp"
#include "core/dnssec/zone_keys.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/routing_plan.hpp"
#include "tools/gtmeshctl/command_table.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace gtmesh::cli {

namespace {

/// A usage error about `dnssec SUB`, from the command table.
int usage(const std::string& sub, const std::string& why) {
  return print_usage_error(gtmeshctl_program(), "dnssec " + sub, why);
}

const zone* find_zone(const config& cfg, const std::string& name) {
  std::string want = dns::canonical_text(name);
  for (const auto& z : cfg.zones)
    if (z.name == want)
      return &z;
  return nullptr;
}

std::string duration_text(int64_t seconds) {
  if (seconds % 86400 == 0)
    return std::to_string(seconds / 86400) + "d";
  if (seconds % 3600 == 0)
    return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds) + "s";
}

int keygen(const std::string& zone_name, const dnssec_options& o) {
  uint8_t alg = 0;
  if (o.algorithm == "ecdsap256sha256" || o.algorithm == "13")
    alg = dnssec::algorithm_ecdsap256sha256;
  else if (o.algorithm == "ed25519" || o.algorithm == "15")
    alg = dnssec::algorithm_ed25519;
  else
    return usage("keygen", "--algorithm expects ecdsap256sha256 or ed25519, not '" + o.algorithm + "'");
  if (!dns::text_to_wire(zone_name)) {
    std::fprintf(stderr, "gtmeshctl: '%s' is not a domain name\n", zone_name.c_str());
    return 2;
  }
  const std::string zone = dns::canonical_text(zone_name);
  // Made under a temporary name in the folder it goes to, then linked to
  // its name: a crash leaves no half key there, and link() never replaces
  // a file that exists.
  const std::filesystem::path folder =
    o.out.empty() ? std::filesystem::path(o.dir) : std::filesystem::path(o.out).parent_path();
  std::error_code ec;
  if (!folder.empty())
    std::filesystem::create_directories(folder, ec);
  if (ec) {
    std::fprintf(stderr, "gtmeshctl: %s: %s\n", folder.c_str(), ec.message().c_str());
    return 1;
  }
  const std::string tmp = (folder.empty() ? std::string(".") : folder.string()) + "/.keygen-" +
                          std::to_string(::getpid()) + ".pem";
  std::string error;
  if (!dnssec::generate_key_file(tmp, alg, error)) {
    std::fprintf(stderr, "gtmeshctl: %s\n", error.c_str());
    return 1;
  }
  auto key = dnssec::load_key_file(tmp, alg, error);
  if (!key) {
    std::filesystem::remove(tmp, ec);
    std::fprintf(stderr, "gtmeshctl: %s\n", error.c_str());
    return 1;
  }
  std::string path = o.out;
  if (path.empty()) {
    char name[64];
    std::snprintf(name, sizeof name, "+%03u+%05u.pem", alg, key->tag);
    path = o.dir + "/K" + zone + name;
  }
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int link_errno = errno;
  std::filesystem::remove(tmp, ec);
  if (linked != 0) {
    if (link_errno == EEXIST)
      std::fprintf(stderr, "gtmeshctl: %s exists (a key file is never overwritten)\n", path.c_str());
    else
      std::fprintf(stderr, "gtmeshctl: %s: %s\n", path.c_str(), std::strerror(link_errno));
    return 1;
  }
  std::printf("wrote %s (key tag %u, %s; mode 0600: copy it to every decider and `gtmesh serve` node)\n",
              path.c_str(), key->tag, dnssec::algorithm_name(alg).c_str());
  std::printf("%s\n%s\n", dnssec::dnskey_record(zone, *key, 3600).c_str(), dnssec::ds_record(zone, *key).c_str());
  return 0;
}

int with_zone_keys(const std::string& zone_name, const dnssec_options& o, bool plan) {
  if (o.config.empty())
    return usage(plan ? "rollover-plan" : "ds", "needs --config FILE");
  load_result loaded = load_config_file(o.config, routing_methods());
  if (!loaded.ok()) {
    std::fputs(loaded.report().c_str(), stderr);
    return 1;
  }
  const zone* z = find_zone(*loaded.cfg, zone_name);
  if (!z || !z->dnssec.enabled) {
    std::fprintf(stderr, "gtmeshctl: %s has no zone %s with dnssec:\n", o.config.c_str(), zone_name.c_str());
    return 1;
  }
  std::string error;
  auto keys = dnssec::load_zone_keys(*z, error);
  if (!keys) {
    std::fprintf(stderr, "gtmeshctl: %s\n", error.c_str());
    return 1;
  }
  if (!plan) {
    // The DS records for the parent (SHA-256), every key in the DNSKEY set;
    // the DNSKEY lines are trust anchors for a resolver without a parent.
    std::printf("%s\n", dnssec::ds_record(z->name, keys->signing).c_str());
    for (const auto& k : keys->published)
      std::printf("%s\n", dnssec::ds_record(z->name, k).c_str());
    std::printf("; trust anchors (DNSKEY):\n%s\n", dnssec::dnskey_record(z->name, keys->signing, keys->dnskey_ttl).c_str());
    for (const auto& k : keys->published)
      std::printf("%s\n", dnssec::dnskey_record(z->name, k, keys->dnskey_ttl).c_str());
    return 0;
  }
  // Pre-publication rollover (RFC 6781 4.1.1.1 / 4.1.2), with the waits
  // that make every cached answer validate.
  uint32_t max_ttl = std::max({keys->dnskey_ttl, z->soa.ttl, z->ns_ttl, std::min(z->soa.ttl, z->soa.minimum)});
  for (const auto& r : z->records)
    max_ttl = std::max(max_ttl, r.ttl);
  const int64_t refresh_s = keys->refresh_ms / 1000;
  std::printf("rollover of %s (signing key tag %u, %s; DNSKEY TTL %s; largest TTL in the zone %s)\n",
              z->name.c_str(), keys->signing.tag, keys->signing.file.c_str(),
              duration_text(keys->dnskey_ttl).c_str(), duration_text(max_ttl).c_str());
  std::printf(
    "1. gtmeshctl dnssec keygen %s --dir DIR; copy the new key to every node; add it under dnssec.publish; push.\n"
    "2. Give the parent the new DS (gtmeshctl dnssec ds %s --config FILE) next to the old one.\n"
    "   Wait at least the DNSKEY TTL (%s) plus the parent's DS TTL after both are visible.\n"
    "3. Swap: dnssec.key = the new key, dnssec.publish = [the old key]; push. Every answer is signed with the new\n"
    "   key from then on (the signature cache is keyed by key tag; signatures are made again every %s).\n"
    "4. Wait the largest TTL in the zone (%s): no resolver still holds an answer signed with the old key.\n"
    "5. Remove the old key from dnssec.publish and push; remove its DS at the parent.\n",
    z->name.c_str(), z->name.c_str(), duration_text(keys->dnskey_ttl).c_str(), duration_text(refresh_s).c_str(),
    duration_text(max_ttl).c_str());
  return 0;
}

/// One record as RFC 3597 generic text: any verifier parses it whatever
/// the type, and no RDATA formatting of ours stands between the bytes
/// signed and the bytes checked.
void print_generic(std::span<const uint8_t> owner, uint16_t type, uint32_t ttl, std::span<const uint8_t> rdata) {
  std::string hex;
  static const char digits[] = "0123456789abcdef";
  for (uint8_t b : rdata) {
    hex.push_back(digits[b >> 4]);
    hex.push_back(digits[b & 15]);
  }
  std::printf("%s %u IN TYPE%u \\# %zu %s\n", dns::wire_to_text(owner).c_str(), ttl, type, rdata.size(),
              hex.empty() ? "" : hex.c_str());
}

/// The static part of a signed zone (plain records, SOA, NS, DNSKEY) with
/// the RRSIGs gtmesh's signer makes and a full NSEC chain over those names,
/// for BIND's dnssec-verify and ldns-verify-zone to check offline. Names
/// with dynamic answers are left out, so this is a check, not a zone to
/// serve (docs/dnssec.md).
int dump_static(const std::string& zone_name, const dnssec_options& o) {
  if (o.config.empty())
    return usage("dump-static", "needs --config FILE");
  load_result loaded = load_config_file(o.config, routing_methods());
  if (!loaded.ok()) {
    std::fputs(loaded.report().c_str(), stderr);
    return 1;
  }
  compile_result compiled = compile_plan(loaded.cfg, 1);
  if (!compiled.plan) {
    std::fprintf(stderr, "gtmeshctl: %s\n", compiled.error.c_str());
    return 1;
  }
  const routing_plan& plan = *compiled.plan;
  const std::string want = dns::canonical_text(zone_name);
  uint32_t zi = 0;
  while (zi < plan.zones.size() && plan.zones[zi].source->name != want)
    ++zi;
  if (zi == plan.zones.size() || !plan.zones[zi].keys) {
    std::fprintf(stderr, "gtmeshctl: %s has no zone %s with dnssec:\n", o.config.c_str(), zone_name.c_str());
    return 1;
  }
  const zone_plan& z = plan.zones[zi];
  const dnssec::zone_keys& keys = *z.keys;

  struct rrset {
    uint16_t type = 0;
    uint32_t ttl = 0;
    std::vector<uint32_t> rdata; ///< plan rdata ids (empty: the DNSKEY set)
  };
  auto less = [](const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    return dnssec::canonical_compare(a, b) < 0;
  };
  std::map<std::vector<uint8_t>, std::vector<rrset>, decltype(less)> names(less);
  for (const record_plan& r : plan.records) {
    if (r.zone != zi || r.mode != record_mode::plain || r.plain.count == 0)
      continue;
    std::vector<uint8_t> owner = *dns::text_to_wire(std::string(r.name));
    for (auto& c : owner)
      c = dns::lower(c);
    rrset set{static_cast<uint16_t>(r.type), r.ttl, {}};
    for (uint32_t i = 0; i < r.plain.count; ++i)
      set.rdata.push_back(plan.answers[r.plain.first + i].rdata);
    names[owner].push_back(std::move(set));
  }
  names[keys.apex].push_back(rrset{dns::type_dnskey, keys.dnskey_ttl, {}});

  const uint32_t now = static_cast<uint32_t>(std::time(nullptr));
  dnssec::rrset_signer signer;
  auto print_rrsig = [&](std::span<const uint8_t> owner, const dnssec::signature* sig) {
    if (!sig)
      return false;
    std::vector<uint8_t> rdata(18);
    dnssec::write_rrsig_header(*sig, rdata.data());
    rdata.insert(rdata.end(), keys.apex.begin(), keys.apex.end());
    rdata.insert(rdata.end(), sig->bytes.begin(), sig->bytes.end());
    print_generic(owner, dns::type_rrsig, sig->original_ttl, rdata);
    return true;
  };
  std::printf("; the static part of %s signed by gtmesh (key tag %u), for dnssec-verify / ldns-verify-zone\n",
              z.source->name.c_str(), keys.signing.tag);
  for (auto it = names.begin(); it != names.end(); ++it) {
    const std::vector<uint8_t>& owner = it->first;
    dns::nsec_bitmap bitmap{};
    auto set_type = [&](uint16_t t) { bitmap[t / 8] |= static_cast<uint8_t>(0x80 >> (t % 8)); };
    for (const rrset& set : it->second) {
      set_type(set.type);
      if (set.rdata.empty()) {
        signer.begin(keys, owner, set.type, set.ttl);
        for (const auto& k : keys.dnskey_set) {
          print_generic(owner, set.type, set.ttl, k);
          signer.add_rdata(k);
        }
      } else {
        signer.begin(keys, owner, set.type, set.ttl);
        for (uint32_t id : set.rdata) {
          const rdata_entry& e = plan.rdata[id];
          const std::span<const uint8_t> bytes{plan.rdata_bytes.data() + e.offset, e.length};
          print_generic(owner, set.type, set.ttl, bytes);
          const auto [from, to] = dns::response_writer::rdata_name_bytes(plan, id);
          signer.add_rdata(bytes, from, to);
        }
      }
      if (!print_rrsig(owner, signer.finish(now))) {
        std::fprintf(stderr, "gtmeshctl: %s type %u could not be signed\n", dns::wire_to_text(owner).c_str(),
                     set.type);
        return 1;
      }
    }
    set_type(dns::type_rrsig);
    set_type(dns::type_nsec);
    auto next = std::next(it) == names.end() ? names.begin() : std::next(it);
    std::vector<uint8_t> nsec(next->first);
    const size_t name_end = nsec.size();
    const size_t octets = dns::bitmap_length(bitmap);
    nsec.push_back(0);
    nsec.push_back(static_cast<uint8_t>(octets));
    nsec.insert(nsec.end(), bitmap.begin(), bitmap.begin() + static_cast<std::ptrdiff_t>(octets));
    print_generic(owner, dns::type_nsec, z.negative_ttl, nsec);
    signer.begin(keys, owner, dns::type_nsec, z.negative_ttl);
    signer.add_rdata(nsec, 0, name_end);
    if (!print_rrsig(owner, signer.finish(now)))
      return 1;
  }
  return 0;
}

} // namespace

int dnssec_command(const std::vector<std::string>& pos, const dnssec_options& options) {
  if (pos.size() != 3)
    return usage(pos.size() > 1 ? pos[1] : "", "expects ZONE");
  if (pos[1] == "keygen")
    return keygen(pos[2], options);
  if (pos[1] == "ds")
    return with_zone_keys(pos[2], options, false);
  if (pos[1] == "rollover-plan")
    return with_zone_keys(pos[2], options, true);
  if (pos[1] == "dump-static")
    return dump_static(pos[2], options);
  return usage(pos[1], "unknown subcommand");
}

} // namespace gtmesh::cli
