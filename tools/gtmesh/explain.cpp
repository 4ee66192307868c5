#include "core/config/config_loader.hpp"
#include "core/dns/lookup/denial_types.hpp"
#include "core/dnssec/covering_name.hpp"
#include "core/dnssec/zone_keys.hpp"
#include "core/text/json_quote.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/engine.hpp"
#include "core/routing/state_file.hpp"
#include "core/text/wrap.hpp"
#include "tools/gtmesh/command_table.hpp"
#include "tools/gtmesh/commands.hpp"

#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace gtmesh::cli {

namespace {

std::string type_name(uint16_t t) {
  switch (t) {
    case dns::type_rrsig: return "RRSIG";
    case dns::type_nsec: return "NSEC";
    case dns::type_dnskey: return "DNSKEY";
    case dns::type_nxname: return "NXNAME";
    default: {
      auto n = dns::to_string(static_cast<dns::rr_type>(t));
      return n.empty() || n == "?" ? "TYPE" + std::to_string(t) : std::string(n);
    }
  }
}

std::string days(int64_t ms) {
  return ms % 86400000 == 0 ? std::to_string(ms / 86400000) + "d" : std::to_string(ms / 3600000) + "h";
}

/// What a DO=1 response to this question carries (docs/dnssec.md), in lines.
std::string dnssec_text(const routing_plan& plan, const routing_query& q, const answer_set& out) {
  if (out.zone == answer_set::no_index)
    return "DNSSEC: not in any zone served here: REFUSED, nothing is signed\n";
  const zone_plan& z = plan.zones[out.zone];
  const std::string zone = dns::wire_to_text(z.wire);
  if (!z.keys)
    return "DNSSEC: zone " + zone + " is not signed (no dnssec:): DO=1 answers carry no RRSIG\n";
  const dnssec::zone_keys& k = *z.keys;
  std::string t = "DNSSEC: zone " + zone + " is signed by key tag " + std::to_string(k.signing.tag) + " (" +
                  dnssec::algorithm_name(k.signing.algorithm) + ", " + k.signing.file + "); DNSKEY set: " +
                  std::to_string(k.signing.tag) + " (signing)";
  for (const auto& p : k.published)
    t += ", " + std::to_string(p.tag) + " (published)";
  t += "\n";
  // A wildcard's answer is signed as the wildcard: its encloser's labels.
  const size_t encloser = out.wildcard_encloser;
  size_t labels = 0;
  for (size_t i = encloser; i < q.name.size() && q.name[i] != 0; i += 1 + q.name[i])
    ++labels;
  const std::string sig = "key tag " + std::to_string(k.signing.tag) + ", signer " + zone;
  const bool apex = q.name.size() == z.wire.size() && std::equal(q.name.begin(), q.name.end(), z.wire.begin());
  if (out.status == answer_status::nodata && q.type == dns::type_dnskey && apex) {
    t += "  with DO=1: the DNSKEY set (" + std::to_string(k.dnskey_set.size()) + " key(s), TTL " +
         std::to_string(k.dnskey_ttl) + ") and RRSIG DNSKEY (" + sig + ")\n";
  } else if (out.status == answer_status::answer && out.count > 0) {
    const auto type = static_cast<uint16_t>(plan.rdata[out.rdata[0]].type);
    t += "  with DO=1: RRSIG " + type_name(type) + " over the " + std::to_string(out.count) +
         " answer record(s) (labels " + std::to_string(labels) + ", original TTL " + std::to_string(out.ttl) + ", " +
         sig + ")";
    if (type == static_cast<uint16_t>(dns::rr_type::cname))
      t += "; each in-zone CNAME target's RRset gets its own RRSIG";
    t += "\n";
    if (encloser != 0) {
      size_t at = 0; // the next closer name: one label more than the encloser
      while (at + 1 + q.name[at] < encloser)
        at += 1 + q.name[at];
      const auto next_closer = q.name.subspan(at);
      std::array<uint8_t, 255> before, after;
      const size_t nb = dnssec::covering_predecessor(next_closer, before);
      const size_t na = dnssec::covering_successor(next_closer, after);
      t += "  synthesized from *." + dns::wire_to_text(q.name.subspan(encloser)) +
           ": signed as that wildcard's RRset (RFC 4035 5.3.2); authority: ";
      if (nb != 0 && na != 0)
        t += "NSEC " + dns::wire_to_text({before.data(), nb}) + " -> " + dns::wire_to_text({after.data(), na}) +
             " [RRSIG NSEC] and RRSIG NSEC, proving " + dns::wire_to_text(next_closer) +
             " and all below it do not exist (TTL " + std::to_string(z.negative_ttl) + ", " + sig + ")\n";
      else
        t += "no proof: " + dns::wire_to_text(next_closer) + " has no covering name (docs/dnssec.md)\n";
    }
  } else {
    const bool nx = out.status == answer_status::nxdomain;
    const dns::nsec_bitmap b = dns::denial_types(plan, out.zone, q.name, q.type, nx);
    std::string types;
    for (uint16_t ty = 0; ty < 256; ++ty)
      if (b[ty / 8] & (0x80 >> (ty % 8)))
        types += (types.empty() ? "" : " ") + type_name(ty);
    const std::string name = dns::wire_to_text(q.name);
    t += std::string("  with DO=1: ") + (nx ? "NOERROR, not NXDOMAIN (compact denial, RFC 9824)" : "NODATA") +
         "; authority: SOA and RRSIG SOA, NSEC " + name + " -> \\000." + name + " [" + types +
         "] and RRSIG NSEC (TTL " + std::to_string(z.negative_ttl) + ", " + sig + ")\n";
  }
  t += "  signatures: valid " + days(k.validity_ms) + " from signing, inception " + days(k.inception_offset_ms) +
       " before; cached per responder thread and made again after " + days(k.refresh_ms) + "\n";
  return t;
}

} // namespace

// gtmesh explain (its options: tools/gtmesh/command_table.cpp)
int explain(const args& a) {
  arg_reader r(a);
  std::string config_path, state_path, client_text = "192.0.2.1", ecs_text, now_text, seed_text;
  bool json = r.flag("--json");
  bool with_dnssec = r.flag("--dnssec");
  r.option("--config", config_path);
  r.option("--state", state_path);
  r.option("--client", client_text);
  r.option("--ecs", ecs_text);
  r.option("--now", now_text);
  r.option("--seed", seed_text);
  std::string unknown;
  auto pos = r.positional(unknown);
  if (!unknown.empty() || config_path.empty() || pos.empty() || pos.size() > 2)
    return usage_error("explain", !unknown.empty()      ? "unknown option '" + unknown + "'"
                                  : config_path.empty() ? std::string("needs --config FILE")
                                                        : std::string("expects NAME [TYPE]"));
  load_result loaded = load_config_file(config_path, routing_methods());
  if (!loaded.ok()) {
    std::fputs(loaded.report().c_str(), stderr);
    return 1;
  }
  compile_result compiled = compile_plan(loaded.cfg);
  if (!compiled.plan) {
    std::fprintf(stderr, "error: %s\n", compiled.error.c_str());
    return 1;
  }
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  if (!now_text.empty()) {
    auto t = parse_time_ms(now_text);
    if (!t) {
      std::fprintf(stderr, "error: --now: expected 2026-11-29T12:00:00Z or Unix ms\n");
      return 2;
    }
    now = *t;
  }
  routing_snapshot snap;
  snap.plan = compiled.plan;
  if (state_path.empty()) {
    snap.view = empty_view(*compiled.plan);
  } else {
    state_load_result st = load_state_file(state_path, *compiled.plan, now);
    if (!st.view) {
      for (const auto& e : st.errors)
        std::fprintf(stderr, "error: %s\n", e.to_string().c_str());
      return 1;
    }
    snap.view = st.view;
    snap.aliases = st.aliases; // its `aliases:` (ALIAS addresses), if any
    now = st.now_ms;
  }
  auto name = dns::text_to_wire(pos[0]);
  auto type = dns::parse_rr_type(pos.size() > 1 ? pos[1] : "A");
  if (!name || !type) {
    std::fprintf(stderr, "error: bad query name or type\n");
    return 2;
  }
  client_info client;
  if (!ecs_text.empty()) {
    auto p = ip_prefix::parse(ecs_text);
    if (!p) {
      std::fprintf(stderr, "error: --ecs: expected a prefix like 198.51.100.0/24\n");
      return 2;
    }
    client = client_info::from_ecs(p->address, static_cast<uint8_t>(p->length));
  } else {
    auto addr = ip_address::parse(client_text);
    if (!addr) {
      std::fprintf(stderr, "error: --client: not an IP address: %s\n", client_text.c_str());
      return 2;
    }
    client = client_info::from_source(*addr);
  }
  routing_query q{*name, static_cast<uint16_t>(*type), client};
  query_context ctx;
  ctx.now_ms = now;
  if (!seed_text.empty())
    ctx.random.reseed(std::stoull(seed_text));
  answer_set out;
  decision_trace trace;
  resolve(snap, q, ctx, out, &trace);
  std::string text = json ? trace.to_json() : trace.to_text();
  if (with_dnssec) {
    const std::string d = dnssec_text(*compiled.plan, q, out);
    if (json && !text.empty() && text.back() == '}')
      text.insert(text.size() - 1, ",\"dnssec\":" + json_string(d));
    else if (!json)
      text += d;
  }
  if (json)
    text += "\n";
  std::fputs((!json && ::isatty(::fileno(stdout)) ? wrap_lines(text) : text).c_str(), stdout);
  return 0;
}

} // namespace gtmesh::cli
