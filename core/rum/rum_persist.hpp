#pragma once

// RUM cells on disk (the decider's RocksDB, default column family keys
// "rum/NNNNNN") and RUM samples between deciders (the "rum-samples"
// command, capability `rum`). Every format says its version first; a
// reader skips what it does not know and never trusts a length.
//
// Chunk, format 1 (little-endian):
//   u8 1, u32 jobs, jobs × (u16 length, bytes), u32 cells,
//   cells × (u8 level, u64 key, u16 job, 26 × u16 counts, u8 shift,
//            u16 ttl16, f32 ok_w, f32 all_w, u32 decayed_s, u32 last_s)
// A sample between deciders, format 1, one text line:
//   "1 JOB NETWORK(hex, - if none) COUNTRY CONTINENT ASN AT_S LATENCY(- if none) OK WEIGHT TTL_S"

#include "core/rum/join_notes.hpp"
#include "core/rum/rum_service.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::rum {

/// Every cell of `s` in chunks of at most `per_chunk` cells.
std::vector<std::string> encode_cells(const rum_service& s, size_t per_chunk = 10'000);
/// Reads chunks back into `s`; returns how many cells (bad chunks skipped).
size_t decode_cells(const std::vector<std::string>& chunks, rum_service& s);

std::string encode_sample(const rum_sample& s);
/// False for a line that does not read (left out).
bool decode_sample(std::string_view line, rum_sample& out);

/// The lines one sample is shared as (the rum-samples command): "1 ..." for
/// its own levels (none when it has none: a late resolver join), and
/// "j RESOLVER 1 ..." for its resolver's network (a decider of an older
/// version reads past that line).
std::vector<std::string> encode_shared(const rum_sample& s);
/// A resolver join note shared with the other deciders: "n ID RESOLVER AT_MS".
std::string encode_note(const join_note& n);

/// One shared line: a sample (out_sample, true returned with is_note false)
/// or a join note (out_note, is_note true). False: malformed.
bool decode_shared(std::string_view line, rum_sample& out_sample, join_note& out_note, bool& is_note);

} // namespace gtmesh::rum
