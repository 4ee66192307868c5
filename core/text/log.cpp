#include "core/text/log.hpp"

#include "core/text/display_text.hpp"
#include "core/text/iso_time.hpp"
#include "core/text/json_quote.hpp"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>

namespace gtmesh {

namespace {

log_settings settings_;

const char* name(log_level l) {
  switch (l) {
    case log_level::debug:
      return "debug";
    case log_level::info:
      return "info";
    case log_level::warn:
      return "warn";
    case log_level::error:
      return "error";
  }
  return "info";
}

} // namespace

void configure_log(const log_settings& s) { settings_ = s; }
const log_settings& current_log_settings() { return settings_; }

bool parse_log_options(const std::string& format, const std::string& level, log_settings& out, std::string& error) {
  if (format.empty() || format == "text")
    out.json = false;
  else if (format == "json")
    out.json = true;
  else {
    error = "--log-format " + format + ": expected text or json";
    return false;
  }
  if (level.empty() || level == "info")
    out.level = log_level::info;
  else if (level == "debug")
    out.level = log_level::debug;
  else if (level == "warn" || level == "warning")
    out.level = log_level::warn;
  else if (level == "error")
    out.level = log_level::error;
  else {
    error = "--log-level " + level + ": expected debug, info, warn or error";
    return false;
  }
  return true;
}

void log_line(log_level level, std::string_view component, std::string_view message) {
  if (level < settings_.level)
    return;
  std::string line;
  if (settings_.json) {
    line = "{\"ts\":" + json_string(iso8601_utc(unix_now_ms())) + ",\"level\":\"" + name(level) +
           "\",\"component\":" + json_string(component) + ",\"msg\":" + json_string(message) + "}\n";
  } else {
    line.reserve(component.size() + message.size() + 10);
    line += "gtmesh ";
    // No escape sequences reach the terminal; peers' text is made one line
    // where it is taken in (display_text), our reports keep theirs.
    line += display_text(component, 256);
    line += ": ";
    line += display_text(message, 64 * 1024, true);
    line += '\n';
  }
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void log_failover_stage(std::string_view component, std::string_view stage, std::string_view details) {
  if (!debug_logging())
    return;
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch());
  std::string m = "failover-trace ";
  m += stage;
  m += ' ';
  m += details;
  m += " t_us=" + std::to_string(us.count());
  log_line(log_level::debug, component, m);
}

void log_error(std::string_view component, const char* format, ...) {
  char buffer[2048];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  if (n < 0)
    return;
  log_line(log_level::error, component, std::string_view(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof buffer - 1)));
}

void log_report(std::string_view component, std::string_view text) {
  if (!settings_.json) {
    std::fwrite(text.data(), 1, text.size(), stderr);
    return;
  }
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty())
      log_line(log_level::error, component, line);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
}

} // namespace gtmesh
