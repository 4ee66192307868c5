#pragma once

// The zone the DNS unit tests answer from: one of every record kind the
// responder writes (A, AAAA, CNAME in and out of zone, MX, TXT, SRV, the
// apex SOA/NS), a large RRset for truncation, and client-dependent records
// (static rules by subnet, a subnet profile, a DC-mode record by client
// measurements) for ECS scopes and unmeasured clients.

#include "core/routing/routing_snapshot.hpp"

#include <string>

namespace gtmesh::dns::test {

/// The config text (file name "test_zone.yaml" in error messages).
const std::string& test_zone_yaml();
/// The measurement state text matching it.
const std::string& test_state_yaml();
/// Unix ms the state is written at (its `now`).
inline constexpr int64_t test_now_ms = 1'795'953'600'000; // 2026-11-29T12:00:00Z

/// Loads and compiles both; aborts the test binary on any error (the texts
/// are fixed, so an error is a bug in the fixture or the loader).
snapshot_ptr make_test_snapshot(uint32_t version = 1);

/// Number of A records of big.example.test.
inline constexpr int big_rrset_size = 40;

} // namespace gtmesh::dns::test
