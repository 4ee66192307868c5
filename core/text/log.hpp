#pragma once

// Operator log lines: one line per event on stderr, as text or JSON
// (--log-format text|json), filtered by level (--log-level). Never one line
// per DNS query. Text lines keep the historic form "gtmesh COMPONENT: MESSAGE"
// (scripts and the chaos harness read them); JSON lines are
//   {"ts":"2026-12-01T05:03:50.051Z","level":"info","component":"decider d1","msg":"..."}
// Thread-safe: each line is written with one call.

#include <string>
#include <string_view>

namespace gtmesh {

enum class log_level { debug, info, warn, error };

struct log_settings {
  bool json = false;
  log_level level = log_level::info;
};

/// Set once at start-up, before threads log.
void configure_log(const log_settings& s);
const log_settings& current_log_settings();

/// Parses --log-format and --log-level values; false (with `error`) on
/// anything else.
bool parse_log_options(const std::string& format, const std::string& level, log_settings& out, std::string& error);

/// True when debug lines are written (check before building one).
inline bool debug_logging() { return current_log_settings().level == log_level::debug; }

/// A debug line of the failover path's stages, "failover-trace STAGE
/// DETAILS t_us=MICROSECONDS" (the wall clock), which `tools/bench/mesh_bench.py
/// --breakdown` reads from every process to say where a failover's time goes.
void log_failover_stage(std::string_view component, std::string_view stage, std::string_view details);

/// Writes one line if `level` passes the filter.
void log_line(log_level level, std::string_view component, std::string_view message);

/// An error line with a printf-style message (no trailing newline): what a
/// command says when it cannot start or stops on an error. Text lines are
/// "gtmesh COMPONENT: MESSAGE", as before; JSON when --log-format json.
void log_error(std::string_view component, const char* format, ...) __attribute__((format(printf, 2, 3)));

/// A report of several lines (a config's errors, one per line, each naming
/// file, line and field): written as it is in text mode, one error line per
/// report line in JSON mode.
void log_report(std::string_view component, std::string_view text);

} // namespace gtmesh
