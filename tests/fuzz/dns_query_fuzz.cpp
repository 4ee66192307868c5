// libFuzzer target: arbitrary bytes as a DNS query, through the whole lookup
// layer (parser, routing engine, response writer with compression and
// truncation), over UDP and TCP sizes, with and without rate limiting.
// Besides the sanitizers' checks, every response must be a well-formed DNS
// response to that query: within the buffer, QR set, the query's ID, and
// sections that parse to the end with backward-only compression pointers.
//
// Built and run by run_fuzz.sh (clang, -fsanitize=fuzzer,address,undefined);
// seeds from make_dns_corpus.py, dictionary dns_query.dict.
// The first input byte picks the transport, the client address and the clock.

#include "core/config/config_loader.hpp"
#include "core/dns/lookup/query_processor.hpp"
#include "core/dnstap/decision_record.hpp"
#include "core/dnstap/dnstap_encoder.hpp"
#include "core/dnstap/tap_capture.hpp"
#include "core/dnstap/tap_reader.hpp"
#include "core/dnssec/zone_keys.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/state_file.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

using namespace gtmesh;
using namespace gtmesh::dns;

namespace {

// One record per routing feature the query path can reach: plain records of
// every type, CNAME chains, truncation, static rules (subnet and region), DC
// mode (each source, gates, within, pick, balance algorithms) and every
// profile method, nested. The geo database is the committed test one.
const char* config_yaml = R"(datacenters:
  - {name: fra, location: {lat: 50.1, lon: 8.7}}
  - {name: iad, location: {lat: 38.9, lon: -77.4}}
  - {name: sin, location: {lat: 1.35, lon: 103.8}}
probes:
  - {name: mon, path: /health}
services:
  - {name: web, backends: {fra: ["10.0.0.1:80", "10.0.0.2:80"], iad: ["10.1.0.1:80"], sin: ["10.2.0.1:80"]}}
geo: {database: @MMDB@}
tsig_keys: [{name: fuzz-key, secret_file: @TSIG@}]
zones:
  - name: example.test
    soa: {primary: ns1.example.test., admin: hostmaster.example.test., minimum: 60}
    dnssec: {key: @KEY@}
    ns: [ns1.example.test., ns2.example.test.]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
      - {name: www, type: A, answers: [192.0.2.10, 192.0.2.11]}
      - {name: www, type: AAAA, answers: ["2001:db8::10"]}
      - {name: alias, type: CNAME, answers: [www.example.test.]}
      - {name: loop, type: CNAME, answers: [loop.example.test.]}
      - {name: out, type: CNAME, answers: [www.example.net.]}
      - {name: mail, type: MX, answers: ["10 mx.example.test.", "20 mx.other.test."]}
      - {name: txt, type: TXT, answers: ["hello", "world"]}
      - {name: _sip._tcp, type: SRV, answers: ["10 5 5060 sip.example.test."]}
      - {name: a.b.c, type: A, answers: [192.0.2.12]}
      - {name: big, type: A, answers: [192.0.2.101, 192.0.2.102, 192.0.2.103, 192.0.2.104, 192.0.2.105,
                                       192.0.2.106, 192.0.2.107, 192.0.2.108, 192.0.2.109, 192.0.2.110,
                                       192.0.2.111, 192.0.2.112, 192.0.2.113, 192.0.2.114, 192.0.2.115,
                                       192.0.2.116, 192.0.2.117, 192.0.2.118, 192.0.2.119, 192.0.2.120,
                                       192.0.2.121, 192.0.2.122, 192.0.2.123, 192.0.2.124, 192.0.2.125,
                                       192.0.2.126, 192.0.2.127, 192.0.2.128, 192.0.2.129, 192.0.2.130,
                                       192.0.2.131, 192.0.2.132, 192.0.2.133, 192.0.2.134, 192.0.2.135]}
      - name: legacy
        type: A
        static:
          rules:
            - {subnet: [198.51.100.0/24, "2001:db8:100::/48"], dc: fra}
            - {dc: iad}
          answers: {fra: [192.0.2.30], iad: [198.51.100.30]}
      - name: near
        type: A
        dc: {source: client, metric: rtt, criterion: lowest, answers: {fra: [192.0.2.40], iad: [198.51.100.40]},
             fail_safe: [192.0.2.49]}
      - name: web
        type: A
        dc: {source: host, metric: cpu, criterion: lowest, balance: weighted_random,
             answers: {fra: [{address: 192.0.2.1, weight: 1}, {address: 192.0.2.2, weight: 3}], iad: [198.51.100.1]}}
      - {name: api, type: A, profile: by-subnet}
      - name: gated
        type: A
        dc: {source: service, service: web, metric: healthyBackends, criterion: highest,
             gate: [{source: host, metric: status, criterion: {equals: up}},
                    {source: host, metric: cpu, criterion: {within: {target: 50, margin: 40}}}],
             pick_dc_count: 2, balance: round_robin,
             answers: {fra: [192.0.2.50, 192.0.2.51], iad: [198.51.100.50], sin: [203.0.113.50]},
             fail_safe: [192.0.2.59]}
      - name: within
        type: A
        dc: {source: host, metric: cpu, criterion: {within: {target: best, margin: 50%}}, pick_dc_count: 3,
             balance: top2, answers: {fra: [192.0.2.60, 192.0.2.61, 192.0.2.62], iad: [198.51.100.60],
             sin: [203.0.113.60]}, on_all_down: nodata}
      - name: near6
        type: AAAA
        dc: {source: client, metric: rtt, balance: closest,
             answers: {fra: [{address: "2001:db8::70", location: {lat: 50, lon: 8}}, "2001:db8::71"],
                       iad: ["2001:db8::72"]}, fail_safe: ["2001:db8::79"]}
      - name: lossy
        type: A
        dc: {source: client, metric: packetLoss, criterion: {equals: 0}, balance: weighted_round_robin,
             answers: {fra: [{address: 192.0.2.80, weight: 2}, 192.0.2.81], iad: [198.51.100.80]}}
      - name: geo-static
        type: A
        static:
          rules:
            - {region: [DE, GEO-EU], dc: fra}
            - {region: US-CA, dc: iad}
            - {dc: sin}
          answers: {fra: [192.0.2.90], iad: [198.51.100.90], sin: [203.0.113.90]}
          balance: random
      - {name: shop, type: A, profile: shop-geo}
      - {name: app, type: A, profile: app-failover}
      - {name: app-alias, type: CNAME, profile: app-names}
      - {name: perf, type: A, profile: perf}
      - {name: pool, type: A, profile: pool}
      - {name: pool, type: AAAA, profile: pool}
      - {name: mxdc, type: MX, dc: {source: host, metric: mem, answers: {fra: ["10 mx-fra.example.test."],
                                                                    iad: ["10 mx-iad.example.test."]}}}
  - name: other.test
    soa: {primary: ns1.example.test., admin: hostmaster.example.test.}
    ns: [ns1.example.test.]
    records:
      - {name: mx, type: A, answers: [203.0.113.25]}
profiles:
  - name: by-subnet
    method: subnet
    endpoints:
      - {name: lan, kind: external, target: 10.10.0.10, subnets: [10.0.0.0/8]}
      - {name: public, kind: external, target: lan.example.test}
  - name: shop-geo
    method: geographic
    endpoints:
      - {name: california, kind: external, target: 192.0.2.1, regions: [US-CA]}
      - {name: eu, kind: dc, dc: fra, answers: [192.0.2.2], regions: [GEO-EU, GEO-ME, GEO-AF]}
      - {name: germany-legal, kind: external, target: 192.0.2.3, regions: [DE], status: stopped}
      - {name: rest, kind: nested, profile: shop-world, regions: [WORLD], min_child_endpoints: 2}
  - name: shop-world
    method: weighted
    endpoints:
      - {name: us, kind: dc, dc: iad, service: web, answers: [198.51.100.1], weight: 3}
      - {name: eu, kind: dc, dc: fra, answers: [192.0.2.2]}
      - {name: asia, kind: dc, dc: sin, answers: [203.0.113.1], status: disabled}
  - name: app-failover
    method: priority
    fail_safe: [192.0.2.250]
    endpoints:
      - {name: primary, kind: dc, dc: fra, service: web, answers: [192.0.2.10], priority: 1}
      - {name: secondary, kind: dc, dc: iad, answers: [198.51.100.10], priority: 2}
      - {name: cloud, kind: external, target: 203.0.113.10, priority: 3, monitor: mon}
  - name: app-names
    method: priority
    endpoints:
      - {name: a, kind: external, target: www.example.test., priority: 1, monitor: mon}
      - {name: b, kind: external, target: www.other.test., priority: 2}
  - name: perf
    method: performance
    endpoints:
      - {name: eu-1, kind: dc, dc: fra, answers: [192.0.2.110]}
      - {name: eu-2, kind: external, target: 192.0.2.111, location: fra}
      - {name: us, kind: dc, dc: iad, answers: [198.51.100.110]}
      - {name: asia, kind: nested, profile: shop-world, location: sin}
  - name: pool
    method: multivalue
    max_return: 3
    on_all_down: fail_open
    endpoints:
      - {name: n1, kind: external, target: 192.0.2.121, monitor: mon}
      - {name: n2, kind: external, target: 192.0.2.122, monitor: mon}
      - {name: n3, kind: external, target: 192.0.2.123}
      - {name: n4, kind: external, target: 192.0.2.124}
      - {name: n6, kind: external, target: "2001:db8::121", monitor: mon}
)";

const char* state_yaml = R"(now: 2026-11-29T12:00:00Z
hosts:
  fra: {status: up, cpu: 20, mem: 50}
  iad: {status: up, cpu: 60, mem: {value: 40, age: 20m}}
  sin: {status: down, cpu: 5}
services:
  web: {fra: {healthyBackends: 2}, iad: {healthyBackends: 1}, sin: {healthyBackends: 0}}
clients:
  198.51.100.0/24: {fra: {rtt: 12, packetLoss: 0}, iad: {rtt: 95, packetLoss: 1.5}}
  192.0.2.0/24: {fra: {rtt: 110}, iad: {rtt: 15, packetLoss: 0}, sin: {rtt: 200}}
  "2001:db8:100::/48": {fra: {rtt: 30}, iad: {rtt: {value: 20, age: 1h}}}
endpoints:
  app-failover/cloud: up
  app-names/a: down
  pool/n1: up
  pool/n2: {value: down, age: 30s}
  pool/n6: up
drained: [sin]
)";

constexpr int64_t now_ms = 1'795'953'600'000;

struct harness {
  snapshot_ptr snapshot;
  worker_counters counters;
  unmeasured_queue unmeasured;
  std::unique_ptr<rate_limiter> rrl;
  std::unique_ptr<query_processor> plain;
  std::unique_ptr<query_processor> limited;
  cookie_secrets cookies; ///< DNS Cookies on (RFC 7873): fixed secrets, current and previous
  std::vector<uint8_t> buffer = std::vector<uint8_t>(max_tcp_message);
  // dnstap on (docs/dns.md): every query is captured into a ring, and each
  // entry is encoded, decoded again and compared (fuzz.dns_query).
  dnstap::tap_ring tap_ring{1 << 20};
  std::unique_ptr<dnstap::tap_capture> tap;
  plan_ptr tap_plan;
  std::vector<uint8_t> frame;
  ip_address sources[4] = {*ip_address::parse("192.0.2.200"), *ip_address::parse("198.51.100.9"),
                           *ip_address::parse("2001:db8:100::9"), *ip_address::parse("127.0.0.1")};

  harness() {
    std::string yaml = config_yaml;
    yaml.replace(yaml.find("@MMDB@"), 6, std::string(GTMESH_SOURCE_DIR) + "/tests/data/test.mmdb");
    // The zone is signed (docs/dnssec.md): DO=1 inputs reach the signer,
    // the signature cache, compact denial and the DNSKEY set. The key is
    // made once per run (ECDSA signatures are randomised anyway).
    std::string key = "/tmp/gtmesh-fuzz-dnssec-" + std::to_string(::getpid()) + ".pem";
    std::string error;
    if (!dnssec::generate_key_file(key, dnssec::algorithm_ecdsap256sha256, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      std::abort();
    }
    yaml.replace(yaml.find("@KEY@"), 5, key);
    // A TSIG key (secret "fuzz-secret-fuzz-secret-fuzz-32b"): signed inputs
    // reach the TSIG checks (corpus: tsig_*).
    std::string tsig = "/tmp/gtmesh-fuzz-tsig-" + std::to_string(::getpid()) + ".key";
    std::FILE* f = std::fopen(tsig.c_str(), "w");
    if (!f || std::fputs("ZnV6ei1zZWNyZXQtZnV6ei1zZWNyZXQtZnV6ei0zMmI=\n", f) < 0 || std::fclose(f) != 0)
      std::abort();
    yaml.replace(yaml.find("@TSIG@"), 6, tsig);
    load_result loaded = load_config_text(yaml, "fuzz.yaml", routing_methods());
    if (!loaded.ok()) {
      std::fputs(loaded.report().c_str(), stderr);
      std::abort();
    }
    compile_result compiled = compile_plan(loaded.cfg, 1);
    if (!compiled.plan) {
      std::fprintf(stderr, "%s\n", compiled.error.c_str());
      std::abort();
    }
    state_load_result st = load_state_text(state_yaml, "fuzz-state.yaml", *compiled.plan, now_ms);
    if (!st.view) {
      for (const auto& e : st.errors)
        std::fprintf(stderr, "%s\n", e.to_string().c_str());
      std::abort();
    }
    snapshot = make_snapshot(compiled.plan, st.view, now_ms, 1);
    std::remove(key.c_str()); // loaded into the plan
    std::remove(tsig.c_str());
    rrl_settings rs;
    rs.responses_per_second = 3;
    rs.exempt_loopback = false;
    rrl = std::make_unique<rate_limiter>(rs);
    plain = std::make_unique<query_processor>(lookup_settings{}, counters, nullptr, &unmeasured, 1);
    limited = std::make_unique<query_processor>(lookup_settings{}, counters, rrl.get(), &unmeasured, 2);
    for (size_t i = 0; i < 16; ++i)
      cookies.current.bytes[i] = static_cast<uint8_t>(i);
    cookies.previous = cookie_secret{};
    plain->use_cookie_secrets(&cookies);
    limited->use_cookie_secrets(&cookies);
    tap = std::make_unique<dnstap::tap_capture>(tap_ring, counters, true, 1);
  }
};

void fail(const char* what) {
  std::fprintf(stderr, "invalid response: %s\n", what);
  __builtin_trap();
}

/// Walks a response: header, question, then every record of every section.
void check_response(const uint8_t* r, size_t n, const uint8_t* query, size_t query_size, transport via) {
  if (via == transport::udp && n > lookup_settings{}.max_udp_size)
    fail("UDP response above the maximum UDP size");
  if (n < 12)
    fail("shorter than a header");
  if (query_size >= 2 && (r[0] != query[0] || r[1] != query[1]))
    fail("id differs");
  if (!(r[2] & 0x80))
    fail("QR not set");
  auto u16 = [&](size_t at) { return static_cast<size_t>(r[at] << 8 | r[at + 1]); };
  auto skip_name = [&](size_t p) -> size_t {
    for (int labels = 0; labels < 128; ++labels) {
      if (p >= n)
        fail("name past end");
      uint8_t l = r[p];
      if ((l & 0xc0) == 0xc0) {
        if (p + 1 >= n)
          fail("pointer past end");
        if ((static_cast<size_t>(l & 0x3f) << 8 | r[p + 1]) >= p)
          fail("forward pointer");
        return p + 2;
      }
      if (l > 63)
        fail("bad label");
      if (l == 0)
        return p + 1;
      p += 1 + l;
    }
    fail("too many labels");
    return 0;
  };
  size_t p = 12;
  for (size_t i = 0; i < u16(4); ++i) {
    p = skip_name(p) + 4;
    if (p > n)
      fail("question past end");
  }
  size_t records = u16(6) + u16(8) + u16(10);
  for (size_t i = 0; i < records; ++i) {
    p = skip_name(p);
    if (p + 10 > n)
      fail("record header past end");
    size_t rdlength = u16(p + 8);
    p += 10 + rdlength;
    if (p > n)
      fail("rdata past end");
  }
  if (p != n)
    fail("trailing bytes");
}

} // namespace

/// Drains the tap ring: each message, encoded as the writer does and
/// decoded again, holds the query and response bytes exactly.
void check_tap(harness& h, const uint8_t* query, size_t query_len, const uint8_t* response, size_t response_len) {
  for (auto e = h.tap_ring.front(); !e.empty(); h.tap_ring.pop(), e = h.tap_ring.front()) {
    if (dnstap::kind_of(e) == dnstap::entry_kind::plan) {
      h.tap_plan = dnstap::take_plan(e);
      continue;
    }
    const dnstap::message_record rec = dnstap::read_message(e);
    const dnstap::message_entry& m = rec.facts;
    const auto q = rec.query;
    const auto r = rec.response;
    if (q.size() != query_len || !std::equal(q.begin(), q.end(), query))
      fail("dnstap: the captured query differs from the one received");
    if (r.size() != response_len || !std::equal(r.begin(), r.end(), response))
      fail("dnstap: the captured response differs from the one sent");
    for (bool as_response : {false, true}) {
      dnstap::encode_dnstap(m, as_response, q, r, h.tap_plan.get(), "fuzz", "gtmesh", h.frame);
      auto back = dnstap::decode_frame(h.frame.data(), h.frame.size());
      if (!back)
        fail("dnstap: an encoded frame does not decode");
      const std::string& bytes = as_response ? back->response_message : back->query_message;
      const auto& want = as_response ? r : q;
      if (bytes.size() != want.size() || !std::equal(want.begin(), want.end(), reinterpret_cast<const uint8_t*>(bytes.data())))
        fail("dnstap: a decoded message differs from the captured one");
      if (as_response && !dnstap::parse_decision(back->extra))
        fail("dnstap: the decision in extra does not parse");
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static harness* h = new harness();
  if (size < 1)
    return 0;
  const uint8_t mode = data[0];
  ++data;
  --size;
  if (size > max_tcp_message)
    size = max_tcp_message;
  const transport via = (mode & 1) ? transport::tcp : transport::udp;
  const size_t capacity = via == transport::tcp ? max_tcp_message : max_udp_buffer;
  if (size > capacity)
    size = capacity;
  query_processor& qp = (mode & 2) ? *h->limited : *h->plain;
  const query_source source{h->sources[(mode >> 2) & 3], via};
  const routing_snapshot* snapshot = (mode & 0x70) == 0x70 ? nullptr : h->snapshot.get();
  std::memcpy(h->buffer.data(), data, size);
  const bool tapped = h->tap->begin(snapshot, {h->buffer.data(), size});
  size_t n = qp.process(std::span<uint8_t>(h->buffer.data(), capacity), size, source, snapshot,
                        query_time{now_ms + (mode >> 4) * 700, now_ms});
  if (n > capacity)
    fail("longer than the buffer");
  if (n > 0)
    check_response(h->buffer.data(), n, data, size, via);
  if (tapped) {
    dnstap::tap_endpoint server{*ip_address::parse("192.0.2.53"), 53, true};
    h->tap->finish(snapshot, source.address, 40000, server, via == transport::tcp, qp.answers(), {h->buffer.data(), n},
                   qp.asked_record());
    check_tap(*h, data, size, h->buffer.data(), n);
  }
  return 0;
}
