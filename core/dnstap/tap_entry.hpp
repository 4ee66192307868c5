#pragma once

// What a responder thread puts into its tap_ring for the dnstap writer: the
// facts of one query and its response, copied as they are, or the note that
// the thread now answers from another routing plan (so the writer can name
// records, DCs and endpoints by the plan the answer came from). Everything
// costly (protobuf encoding, names, the sink) happens on the writer thread.

#include "core/routing/routing_plan.hpp"

#include <cstdint>
#include <cstring>
#include <span>

namespace gtmesh::dnstap {

enum class entry_kind : uint8_t { message = 1, plan = 2 };

/// Followed in the ring by `query_len` bytes of the query as received, then
/// `response_len` bytes of the response as sent.
struct message_entry {
  entry_kind kind = entry_kind::message;
  uint8_t family = 4;   ///< 4 or 6
  uint8_t protocol = 1; ///< dnstap SocketProtocol: 1 UDP, 2 TCP
  uint8_t log = 3;      ///< bit 0: the query, bit 1: the response
  // The decision (core/routing/answer_set.hpp), by index into the plan.
  uint8_t status = 0;
  uint8_t outcome = 0;
  uint8_t scope = 0;
  uint8_t wildcard = 0;
  uint16_t client_port = 0;
  uint16_t server_port = 0;
  uint32_t query_len = 0;
  uint32_t response_len = 0;
  uint32_t zone = UINT32_MAX; ///< the zone that answered (set unless refused)
  uint32_t record = UINT32_MAX;
  uint32_t asked_record = UINT32_MAX; ///< after a CNAME chain: the record of the name asked
  uint32_t dc = UINT32_MAX;
  uint32_t endpoint = UINT32_MAX;
  uint32_t config_version = 0;
  uint64_t generation = 0;
  int64_t query_ns = 0;    ///< Unix time the query was received
  int64_t response_ns = 0; ///< Unix time the response was made
  uint8_t client[16] = {};
  uint8_t server[16] = {};
  bool has_server = false;
};

/// The plan the messages after it were answered from. `plan` was made with
/// new on the responder thread; the writer takes it over.
struct plan_entry {
  entry_kind kind = entry_kind::plan;
  plan_ptr* plan = nullptr;
};

/// The reader's side of a ring record (the writer thread's, tests').
inline entry_kind kind_of(std::span<const uint8_t> record) noexcept { return static_cast<entry_kind>(record[0]); }

/// Takes over the plan of a plan note (and frees the note).
inline plan_ptr take_plan(std::span<const uint8_t> record) {
  plan_entry e;
  std::memcpy(&e, record.data(), sizeof e);
  plan_ptr out = std::move(*e.plan);
  delete e.plan;
  return out;
}

/// A message record: its facts, the query as received, the response as sent.
struct message_record {
  message_entry facts;
  std::span<const uint8_t> query;
  std::span<const uint8_t> response;
};

inline message_record read_message(std::span<const uint8_t> record) {
  message_record r;
  std::memcpy(&r.facts, record.data(), sizeof r.facts);
  r.query = record.subspan(sizeof r.facts, r.facts.query_len);
  r.response = record.subspan(sizeof r.facts + r.facts.query_len, r.facts.response_len);
  return r;
}

} // namespace gtmesh::dnstap
