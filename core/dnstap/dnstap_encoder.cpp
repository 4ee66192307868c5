#include "core/dnstap/dnstap_encoder.hpp"

#include "core/dnstap/decision_record.hpp"

#include "dnstap.pb-c.h"

namespace gtmesh::dnstap {

namespace {

ProtobufCBinaryData bytes(const void* data, size_t len) {
  return ProtobufCBinaryData{len, static_cast<uint8_t*>(const_cast<void*>(data))};
}

} // namespace

void encode_dnstap(const message_entry& m, bool response, std::span<const uint8_t> query,
                   std::span<const uint8_t> answer, const routing_plan* plan, const std::string& identity,
                   const std::string& version, std::vector<uint8_t>& out) {
  Dnstap__Message msg = DNSTAP__MESSAGE__INIT;
  msg.type = response ? DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE : DNSTAP__MESSAGE__TYPE__AUTH_QUERY;
  msg.has_socket_family = 1;
  msg.socket_family = m.family == 4 ? DNSTAP__SOCKET_FAMILY__INET : DNSTAP__SOCKET_FAMILY__INET6;
  msg.has_socket_protocol = 1;
  msg.socket_protocol = m.protocol == 2 ? DNSTAP__SOCKET_PROTOCOL__TCP : DNSTAP__SOCKET_PROTOCOL__UDP;
  const size_t alen = m.family == 4 ? 4 : 16;
  msg.has_query_address = 1;
  msg.query_address = bytes(m.client, alen);
  msg.has_query_port = 1;
  msg.query_port = m.client_port;
  if (m.has_server) {
    msg.has_response_address = 1;
    msg.response_address = bytes(m.server, alen);
    msg.has_response_port = 1;
    msg.response_port = m.server_port;
  }
  msg.has_query_time_sec = 1;
  msg.query_time_sec = static_cast<uint64_t>(m.query_ns / 1'000'000'000);
  msg.has_query_time_nsec = 1;
  msg.query_time_nsec = static_cast<uint32_t>(m.query_ns % 1'000'000'000);
  if (plan && m.zone < plan->zones.size()) {
    msg.has_query_zone = 1;
    msg.query_zone = bytes(plan->zones[m.zone].wire.data(), plan->zones[m.zone].wire.size());
  }
  std::string extra;
  if (response) {
    msg.has_response_time_sec = 1;
    msg.response_time_sec = static_cast<uint64_t>(m.response_ns / 1'000'000'000);
    msg.has_response_time_nsec = 1;
    msg.response_time_nsec = static_cast<uint32_t>(m.response_ns % 1'000'000'000);
    msg.has_response_message = 1;
    msg.response_message = bytes(answer.data(), answer.size());
    extra = decision_text(m, plan, answer);
  } else {
    msg.has_query_message = 1;
    msg.query_message = bytes(query.data(), query.size());
  }
  Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
  d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
  d.message = &msg;
  d.has_identity = 1;
  d.identity = bytes(identity.data(), identity.size());
  d.has_version = 1;
  d.version = bytes(version.data(), version.size());
  if (!extra.empty()) {
    d.has_extra = 1;
    d.extra = bytes(extra.data(), extra.size());
  }
  out.resize(dnstap__dnstap__get_packed_size(&d));
  dnstap__dnstap__pack(&d, out.data());
}

} // namespace gtmesh::dnstap
