// libFuzzer target: arbitrary bytes as what a recursive resolver sent back to
// a decider resolving an ALIAS target, through read_recursive_reply
// (core/dns/wire/recursive_query.hpp). The first byte picks the type asked
// (odd: AAAA) and the id is the message's own first two bytes half the time
// (so the rest of the reader is reached), else 0x1234.
//
// Contract checked besides the sanitizers: addresses come only with the
// `addresses` verdict, never more than max_reply_addresses, never repeated,
// each of the family asked; every other verdict carries none. Built and run
// by run_fuzz.sh.

#include "core/dns/wire/name.hpp"
#include "core/dns/wire/recursive_query.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace gtmesh;

namespace {

void fail(const char* what) {
  std::fprintf(stderr, "contract violated: %s\n", what);
  __builtin_trap();
}

const std::vector<uint8_t> qname = *dns::text_to_wire("lb.example.net");

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const bool v6 = data[0] & 1;
  const bool own_id = data[0] & 2;
  std::span<const uint8_t> message(data + 1, size - 1);
  const uint16_t id = own_id && message.size() >= 2 ? static_cast<uint16_t>(message[0] << 8 | message[1]) : 0x1234;
  const uint16_t type = v6 ? 28 : 1;
  const dns::recursive_reply r = dns::read_recursive_reply(message, id, qname, type);
  if (r.verdict != dns::reply_verdict::addresses && !r.addresses.empty())
    fail("addresses without the addresses verdict");
  if (r.verdict == dns::reply_verdict::addresses && r.addresses.empty())
    fail("the addresses verdict without addresses");
  if (r.addresses.size() > dns::max_reply_addresses)
    fail("more addresses than max_reply_addresses");
  for (size_t i = 0; i < r.addresses.size(); ++i) {
    if (r.addresses[i].v4() == v6)
      fail("an address of the other family");
    if (std::find(r.addresses.begin(), r.addresses.begin() + static_cast<std::ptrdiff_t>(i), r.addresses[i]) !=
        r.addresses.begin() + static_cast<std::ptrdiff_t>(i))
      fail("an address twice");
  }
  return 0;
}
