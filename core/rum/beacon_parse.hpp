#pragma once

// Parsers of the two beacon formats real users' measurements arrive in.
// Total: any input gives samples or an error naming where it went wrong,
// never an exception past the parser, never an abort (fuzzed: tests).
//
// 1. NS1's bulk beacon v3 (ns1/pulsar-rum, proto/bulkbeacon/v3, Apache-2.0)
//    in the protobuf JSON mapping: {"beacons": [{"appid", "signature",
//    "measurements": [{"attribution": {"jobid", "location": {"ipAddress" |
//    "geoCountry", "geoSubdiv", "asn"}, "deviceType"}, "payloads":
//    [{"version", "timstampEpochNs", "statusCode", "attribution",
//    "dataTtl", "data": [{"simpleLatency": {"valueMs"}} |
//    {"detailedPerformance": {... "timeToFirstByteMs",
//    "timeToLastByteMs"}} | {"score": {"value"}} | {"availability": {"up",
//    "statusCode"}}]}]}]}]}, lowerCamelCase or the proto's snake_case names,
//    64-bit numbers as strings or numbers, unknown fields ignored. A body
//    may also be NDJSON: one Beacons (or one Beacon) object per line.
//    gtmesh's one extension: a Measurement's "gtmeshViewId" (the page
//    view's id the tag also resolved as a DNS name: the resolver join).
// 2. W3C Network Error Logging reports (application/reports+json): a list
//    of {"age", "type": "network-error", "url", "body": {"elapsed_time",
//    "phase", "sampling_fraction", "server_ip", "status_code", "type"}}.
//    user_agent and url are read past and never kept.
//
// String views in what is returned point into the parser's buffers: valid
// until the next parse with the same beacon_parser.

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::rum {

/// One measurement of one job, as a beacon states it.
struct beacon_sample {
  std::string_view app;
  std::string_view job;
  std::string_view ip;       ///< attribution by address ("" if by geography)
  std::string_view country;  ///< attribution by geography
  std::string_view subdiv;
  int32_t asn = 0;
  std::string_view view_id;  ///< gtmeshViewId ("" if none)
  uint64_t timestamp_ns = 0; ///< 0: not given (the arrival time counts)
  int32_t status_code = 0;   ///< 0: not given
  int32_t data_ttl_s = 0;    ///< 0: not given
  double latency_ms = NAN;   ///< NaN: none
  int availability = -1;     ///< -1 none, 0 down, 1 up
  bool score_only = false;   ///< only a Score: not used for steering
};

/// One NEL report.
struct nel_report {
  int64_t age_ms = 0;
  std::string_view type;     ///< body.type: "ok", "tcp.refused", "http.error", ...
  std::string_view phase;    ///< "dns", "connection", "application"
  std::string_view server_ip;
  double elapsed_ms = NAN;
  double sampling_fraction = 1;
  int32_t status_code = 0;
};

class beacon_parser {
public:
  beacon_parser();
  ~beacon_parser();
  beacon_parser(const beacon_parser&) = delete;
  beacon_parser& operator=(const beacon_parser&) = delete;

  /// Parses a Beacons body (JSON or NDJSON). False with `error` ("body:
  /// beacons[0].measurements[1].payloads[0].timstampEpochNs: not an integer")
  /// when the body is malformed; then `out` is empty.
  bool parse_beacons(std::string_view body, std::vector<beacon_sample>& out, std::string& error);
  /// Parses a NEL report list (a single report object is taken too).
  bool parse_nel(std::string_view body, std::vector<nel_report>& out, std::string& error);

  struct impl; ///< simdjson's parser and what NDJSON lines keep

private:
  std::unique_ptr<impl> impl_;
};

} // namespace gtmesh::rum
