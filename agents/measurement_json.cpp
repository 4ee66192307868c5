#include "agents/measurement_json.hpp"

#include "core/text/json_quote.hpp"

#include <cmath>

namespace gtmesh::agents {

namespace {

void append_string(std::string& out, std::string_view s) {
  append_json_string(out, s);
}

void append_number(std::string& out, double v) {
  char buf[64];
  if (!std::isfinite(v))
    out += "null";
  else if (v == std::trunc(v) && std::fabs(v) < 1e15)
    out += (std::snprintf(buf, sizeof buf, "%.0f", v), buf);
  else {
    std::snprintf(buf, sizeof buf, "%.6f", v);
    std::string s = buf;
    while (s.back() == '0')
      s.pop_back();
    if (s.back() == '.') // 1.0000001 prints "1.000000": JSON has no "1."
      s.pop_back();
    out += s;
  }
}

} // namespace

std::string to_json_line(const measurement& m) {
  const metric_info& mi = info(m.metric);
  std::string out;
  out.reserve(192);
  out += "{\"dc\":";
  append_string(out, m.dc);
  out += ",\"source\":";
  append_string(out, to_string(m.src));
  out += ",\"key\":";
  append_string(out, m.key);
  out += ",\"metric\":";
  append_string(out, mi.name);
  out += ",\"value\":";
  append_number(out, m.value);
  out += ",\"unit\":";
  append_string(out, mi.unit);
  out += ",\"at_ms\":" + std::to_string(m.at_ms);
  out += ",\"origin\":";
  append_string(out, m.origin);
  out += ",\"seq\":" + std::to_string(m.seq);
  out += '}';
  return out;
}

void json_lines_sink::deliver(std::span<const measurement> batch) {
  std::lock_guard lock(mutex_);
  for (const auto& m : batch) {
    std::string line = to_json_line(m);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), out_);
  }
  std::fflush(out_);
}

} // namespace gtmesh::agents
