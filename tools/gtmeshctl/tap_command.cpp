#include "tools/gtmeshctl/tap_command.hpp"

#include "core/dns/wire/name.hpp"
#include "core/dns/wire/rr_type.hpp"
#include "core/dnstap/decision_record.hpp"
#include "core/dnstap/tap_reader.hpp"
#include "core/text/iso_time.hpp"
#include "core/text/json_quote.hpp"
#include "tools/gtmeshctl/command_table.hpp"

#include <arpa/inet.h>

#include <cstdio>
#include <optional>

namespace gtmesh::cli {

namespace {

/// What a printed line needs from a DNS message: question, RCODE and the
/// A/AAAA addresses of the answer section.
struct message_summary {
  std::string qname = "?";
  std::string qtype = "?";
  std::string rcode = "?";
  std::vector<std::string> addresses;
};

/// A name at `at` (compression followed); false when malformed.
bool skip_name(const std::string& m, size_t& at) {
  for (int hops = 0; at < m.size() && hops < 128; ++hops) {
    const uint8_t len = static_cast<uint8_t>(m[at]);
    if (len == 0) {
      ++at;
      return true;
    }
    if ((len & 0xc0) == 0xc0) {
      at += 2;
      return at <= m.size();
    }
    at += 1 + len;
  }
  return false;
}

message_summary summarize(const std::string& m) {
  message_summary s;
  if (m.size() < 12)
    return s;
  static const char* rcodes[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"};
  const unsigned rc = static_cast<uint8_t>(m[3]) & 0x0f;
  s.rcode = rc < 6 ? rcodes[rc] : "RCODE" + std::to_string(rc);
  const unsigned qd = (static_cast<uint8_t>(m[4]) << 8) | static_cast<uint8_t>(m[5]);
  const unsigned an = (static_cast<uint8_t>(m[6]) << 8) | static_cast<uint8_t>(m[7]);
  size_t at = 12;
  if (qd >= 1) {
    const size_t start = at;
    if (!skip_name(m, at) || at + 4 > m.size())
      return s;
    s.qname = dns::wire_to_text(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(m.data()) + start, at - start));
    const uint16_t t = static_cast<uint16_t>((static_cast<uint8_t>(m[at]) << 8) | static_cast<uint8_t>(m[at + 1]));
    s.qtype = std::string(dns::to_string(static_cast<dns::rr_type>(t)));
    at += 4;
  }
  for (unsigned i = 0; i < an; ++i) {
    if (!skip_name(m, at) || at + 10 > m.size())
      break;
    const uint16_t t = static_cast<uint16_t>((static_cast<uint8_t>(m[at]) << 8) | static_cast<uint8_t>(m[at + 1]));
    const size_t len = (static_cast<uint8_t>(m[at + 8]) << 8) | static_cast<uint8_t>(m[at + 9]);
    at += 10;
    if (at + len > m.size())
      break;
    char text[INET6_ADDRSTRLEN] = {};
    if (t == 1 && len == 4)
      inet_ntop(AF_INET, m.data() + at, text, sizeof text);
    else if (t == 28 && len == 16)
      inet_ntop(AF_INET6, m.data() + at, text, sizeof text);
    if (text[0])
      s.addresses.emplace_back(text);
    at += len;
  }
  return s;
}

std::string time_text(int64_t ns) {
  if (ns == 0)
    return "-";
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>((ns % 1'000'000'000) / 1000));
  std::string t = iso8601_utc(ns / 1'000'000);
  if (!t.empty() && t.back() == 'Z')
    t.pop_back();
  if (auto dot = t.find('.'); dot != std::string::npos)
    t.resize(dot);
  return t + frac + "Z";
}

void print(const dnstap::tap_message& m, bool json) {
  const bool response = m.type == "AUTH_RESPONSE";
  const message_summary s = summarize(response ? m.response_message : m.query_message);
  const auto decision = dnstap::parse_decision(m.extra);
  const std::string client = m.query_address + ":" + std::to_string(m.query_port);
  const std::string when = time_text(response ? m.response_time_ns : m.query_time_ns);
  if (json) {
    std::string out = "{\"type\":" + json_string(m.type) + ",\"time\":" + json_string(when) +
                      ",\"client\":" + json_string(m.query_address) + ",\"client_port\":" + std::to_string(m.query_port) +
                      ",\"protocol\":" + json_string(m.protocol) + ",\"qname\":" + json_string(s.qname) +
                      ",\"qtype\":" + json_string(s.qtype);
    if (response) {
      out += ",\"rcode\":" + json_string(s.rcode) + ",\"answers\":[";
      for (size_t i = 0; i < s.addresses.size(); ++i)
        out += (i ? "," : "") + json_string(s.addresses[i]);
      out += "]";
    }
    if (decision) {
      out += ",\"decision\":{";
      bool first = true;
      for (const auto& [k, v] : *decision) {
        out += (first ? "" : ",") + json_string(k) + ":" + json_string(v);
        first = false;
      }
      out += "}";
    } else if (!m.extra.empty()) {
      out += ",\"extra\":" + json_string(m.extra);
    }
    out += ",\"identity\":" + json_string(m.identity) + "}";
    std::printf("%s\n", out.c_str());
    return;
  }
  std::string line = when + " " + (response ? "R " : "Q ") + client + " " + m.protocol + " " + s.qname + " " + s.qtype;
  if (response) {
    line += " " + s.rcode;
    if (!s.addresses.empty()) {
      line += " ->";
      for (const auto& a : s.addresses)
        line += " " + a;
    }
  }
  if (decision) {
    auto get = [&](const char* k) {
      auto it = decision->find(k);
      return it == decision->end() ? std::string("-") : it->second;
    };
    line += " | " + get("reason") + " record=" + get("record") + " mode=" + get("mode");
    if (get("profile") != "-")
      line += " profile=" + get("profile") + " method=" + get("method");
    line += " dc=" + get("dc") + " endpoint=" + get("endpoint") + " scope=" + get("scope") + " cfg=" + get("cfg") +
            " gen=" + get("gen");
  }
  std::printf("%s\n", line.c_str());
}

} // namespace

int tap_command(const std::vector<std::string>& pos, const tap_options& options) {
  if (pos.size() != 2)
    return print_usage_error(gtmeshctl_program(), "tap", "expects one FILE or unix:PATH");
  uint64_t seen = 0;
  auto each = [&](const dnstap::tap_message& m) {
    print(m, options.json);
    std::fflush(stdout);
    return options.limit == 0 || ++seen < options.limit;
  };
  std::string error;
  const std::string& source = pos[1];
  const bool ok = source.starts_with("unix:")
                    ? dnstap::read_tap_socket(source.substr(5), options.for_seconds, each, error)
                    : dnstap::read_tap_file(source.starts_with("file:") ? source.substr(5) : source, each, error);
  if (!ok) {
    std::fprintf(stderr, "gtmeshctl tap: %s\n", error.c_str());
    return 1;
  }
  return 0;
}

} // namespace gtmesh::cli
