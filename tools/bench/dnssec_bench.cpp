// DNSSEC signing cost (docs/dnssec.md, docs/benchmarks.md "DNSSEC"): one
// RRset signed on a cache miss (the cold path: OpenSSL's ECDSA P-256 or
// Ed25519), served from the signature cache (the warm path), and the cache's
// memory at 100,000 distinct RRsets.
//
//   build/tools/bench/dnssec_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include "core/config/config_model.hpp"
#include "core/dns/wire/name.hpp"
#include "core/dnssec/rrset_signer.hpp"
#include "core/dnssec/zone_keys.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <string>

using namespace gtmesh;

namespace {

std::shared_ptr<const dnssec::zone_keys> keys_of(uint8_t algorithm) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("gtmesh-dnssec-bench-" + std::to_string(algorithm) + "-" + std::to_string(::getpid()) + ".pem"))
                       .string();
  std::string error;
  if (!dnssec::generate_key_file(path, algorithm, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::abort();
  }
  zone z;
  z.name = "bench.test.";
  z.dnssec.enabled = true;
  z.dnssec.algorithm = algorithm;
  z.dnssec.key = path;
  auto keys = dnssec::load_zone_keys(z, error);
  std::filesystem::remove(path);
  if (!keys) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::abort();
  }
  return keys;
}

/// Every iteration another owner name: each is a miss, i.e. a signature.
void BM_sign_cold(benchmark::State& state) {
  auto keys = keys_of(static_cast<uint8_t>(state.range(0)));
  dnssec::rrset_signer signer(64);
  const uint8_t addr[4] = {192, 0, 2, 1};
  uint64_t i = 0;
  std::vector<std::vector<uint8_t>> names;
  for (int k = 0; k < 4096; ++k)
    names.push_back(*dns::text_to_wire("n" + std::to_string(k) + ".bench.test."));
  for (auto _ : state) {
    signer.begin(*keys, names[i % names.size()], 1, 30 + static_cast<uint32_t>(i / names.size()));
    signer.add_rdata(addr);
    benchmark::DoNotOptimize(signer.finish(1'795'953'600));
    ++i;
  }
  state.counters["signatures/s"] = benchmark::Counter(static_cast<double>(signer.counters().made), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_sign_cold)->Arg(dnssec::algorithm_ecdsap256sha256)->Arg(dnssec::algorithm_ed25519);

/// The same RRset over and over: canonical form, hash, cache hit.
void BM_sign_cached(benchmark::State& state) {
  auto keys = keys_of(dnssec::algorithm_ecdsap256sha256);
  dnssec::rrset_signer signer;
  const uint8_t addr[4] = {192, 0, 2, 1};
  auto owner = *dns::text_to_wire("gslb.bench.test.");
  for (auto _ : state) {
    signer.begin(*keys, owner, 1, 30);
    signer.add_rdata(addr);
    benchmark::DoNotOptimize(signer.finish(1'795'953'600));
  }
}
BENCHMARK(BM_sign_cached);

/// A cache sized for 100,000 RRsets: its bytes (the entries are fixed size).
void BM_cache_memory_100k(benchmark::State& state) {
  for (auto _ : state) {
    dnssec::rrset_signer signer(100000);
    benchmark::DoNotOptimize(&signer);
  }
  size_t sets = 1;
  while (sets * 4 < 100000)
    sets <<= 1;
  state.counters["cache_MB"] = static_cast<double>(sets * 4 * sizeof(dnssec::signature)) / 1e6;
}
BENCHMARK(BM_cache_memory_100k)->Iterations(3);

} // namespace

BENCHMARK_MAIN();
