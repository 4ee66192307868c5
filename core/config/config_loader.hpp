#pragma once

#include "core/config/config_error.hpp"
#include "core/config/config_model.hpp"
#include "core/config/profile_rules.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gtmesh {

/// Largest config text a loader accepts (a file; 1,000,000 records of the
/// scale bench take 364 MB). A push is also bounded by what one entry of
/// the replicated log may hold compressed (consensus::max_config_bytes).
inline constexpr size_t max_config_bytes = 512 * 1024 * 1024;
/// Largest latency_table CSV accepted.
inline constexpr size_t max_latency_table_bytes = 64 * 1024 * 1024;

/// The outcome of loading a config: either a validated model (and possibly
/// warnings) or a non-empty list of errors. Never both a model and errors.
struct load_result {
  config_ptr cfg;
  config_errors errors;
  config_errors warnings;

  bool ok() const noexcept { return cfg != nullptr; }
  /// Errors then warnings, one per line, each "file:line:col: field: message".
  std::string report() const;
};

/// How much of a config a loader reads. Agents measure and need every
/// section but the zones (their records are most of a big config and are the
/// deciders' business): measurement skips `zones` and its checks, so an agent
/// of a 100,000-record cluster holds kilobytes, not the DNS plan.
enum class config_scope : uint8_t { whole, measurement };

/// Where a config comes from, which decides what a rule added after configs
/// were committed does to it.
enum class config_origin : uint8_t {
  /// An operator's config on its way in (check-config, a push, the config
  /// API, gtmesh serve): every broken rule is an error and the config is
  /// refused.
  operator_file,
  /// A config the cluster committed already (a decider loading its store or
  /// its log, at start or when applying an entry): a record that breaks a
  /// rule added since (a CNAME at the zone apex) is left out with a warning
  /// naming its line, so that an upgrade never refuses the whole config a
  /// cluster serves. Every older rule is still an error.
  committed,
};

/// After a load, the freed node table and loader scratch go back to the
/// system (malloc_trim) so that a process that goes on serving holds only
/// its model. A command that loads once and exits turns it off
/// (tools/gtmesh/main.cpp): the plan it compiles next would only fault the
/// same pages in again, zeroed; `gtmesh check-config` of 100,000 records
/// was 12 % faster without it (docs/benchmarks.md, "Scale").
inline std::atomic<bool> trim_heap_after_load{true};

/// Both loaders are total: whatever the bytes, they return a model or errors
/// naming file:line:column and field, and never throw. Beyond the YAML
/// reader's limit (yaml::max_depth nested levels, a YAML syntax error) they bound the
/// input size (max_config_bytes) and the nesting of profiles
/// (max_profile_nesting).
///
/// Reads and validates a YAML config file. `methods` is the routing method
/// catalog (normally `routing_methods()` from core/routing/all_methods.hpp). Relative paths inside it
/// (geo.database, latency_table) are resolved against the file's directory.
load_result load_config_file(const std::string& path, const method_catalog& methods,
                             config_scope scope = config_scope::whole,
                             config_origin origin = config_origin::operator_file);

/// Validates YAML text; `file` is the name errors carry and the base for
/// relative paths. The same rules as load_config_file.
load_result load_config_text(std::string_view yaml, const std::string& file, const method_catalog& methods,
                             config_scope scope = config_scope::whole,
                             config_origin origin = config_origin::operator_file);

/// A loaded config changed: `base` was loaded from `base_text` (with no
/// warning), and `text` is that text edited. When everything that differs
/// lies inside the records of one zone, only the records it touches are
/// read, and the model is `base` with them replaced: a one-record change
/// to 100,000 records costs what those records and the checks across a
/// zone's records cost, not a whole load (docs/config.md, "Changes at
/// size"). The result is the model load_config_text would make of `text`
/// (line numbers included). nullopt when the change is not one it takes
/// (a section other than records, lines moved under anything but the
/// zone's own records, anchors, ALIAS records) or does not load cleanly:
/// the caller then loads `text` whole, which gives every error and
/// warning as usual. Never throws.
std::optional<load_result> load_config_change(const config& base, std::string_view base_text, std::string_view text,
                                              const std::string& file, const method_catalog& methods,
                                              config_origin origin = config_origin::operator_file);

} // namespace gtmesh
