// libFuzzer target: arbitrary bytes as what an HTTP(S) probe read from a
// backend, through parse_http_response and the match rules a probe applies
// to the result (status ranges, body substring; agents/probes/run_probe.cpp).
//
// The first two bytes pick the call: bit 0 of the first says the peer closed
// (eof); the rest of it and the second byte pick max_body (small values
// exercise truncation) and the match rules. Then the response is parsed again
// from every prefix length a reader could have seen on the way (up to 64
// cuts), as the probe calls it after each read.
//
// Contract checked besides the sanitizers: a complete response has a final
// status (200..999) and a body of at most max_body bytes; a malformed one says
// why; an incomplete one never comes with eof. Built and run by run_fuzz.sh.

#include "agents/probes/http/http_response.hpp"
#include "agents/probes/probe_spec.hpp"

#include <cstdio>
#include <string_view>
#include <vector>

using namespace gtmesh;
using namespace gtmesh::agents;

namespace {

void fail(const char* what) {
  std::fprintf(stderr, "contract violated: %s\n", what);
  __builtin_trap();
}

void check(std::string_view data, bool eof, size_t max_body, const std::vector<status_range>& ranges,
           std::string_view match) {
  http_response r = parse_http_response(data, eof, max_body);
  switch (r.status_of_parse) {
    case http_response::state::complete:
      if (r.status < 200 || r.status > 999)
        fail("a complete response without a status");
      if (r.body.size() > max_body)
        fail("a body above max_body");
      // What judge_http_reply does with it.
      if (status_matches(r.status, ranges) && !match.empty())
        (void)r.body.find(match);
      break;
    case http_response::state::malformed:
      if (r.error.empty())
        fail("malformed without a reason");
      break;
    case http_response::state::incomplete:
      if (eof)
        fail("incomplete although the peer closed");
      break;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2)
    return 0;
  const bool eof = data[0] & 1;
  static constexpr size_t max_bodies[] = {0, 1, 16, 4096, 64 * 1024, SIZE_MAX};
  const size_t max_body = max_bodies[(data[0] >> 1) % 6];
  const std::vector<status_range> ranges = data[1] & 1 ? std::vector<status_range>{{200, 399}}
                                                       : std::vector<status_range>{{200, 200}, {404, 404}};
  const std::string_view match = data[1] & 2 ? "OK" : "";
  std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  check(text, eof, max_body, ranges, match);
  const size_t step = text.size() / 64 + 1;
  for (size_t cut = 0; cut < text.size(); cut += step)
    check(text.substr(0, cut), false, max_body, ranges, match);
  return 0;
}
