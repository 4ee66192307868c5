#pragma once

// The seam between the generic config loader and the routing methods.
// The loader parses every profile and endpoint field and checks what is
// common to all methods (types, ranges, references, nested cycles); each
// routing method then checks its own rules through this interface, so that
// adding a method never touches core/config.

#include "core/config/config_error.hpp"
#include "core/config/config_model.hpp"

#include <string>
#include <string_view>

namespace gtmesh {

/// Collects what a method finds wrong with one profile.
class profile_report {
public:
  /// `file`: the config file `p` was read from (errors name it).
  profile_report(const std::string& file, const profile& p, config_errors& errors, config_errors& warnings)
      : file_(file), profile_(p), errors_(errors), warnings_(warnings) {}

  /// A problem with one endpoint's `key` ("priority", "regions", ...).
  void error(const endpoint& e, std::string_view key, std::string message);
  void warn(const endpoint& e, std::string_view key, std::string message);
  /// A problem with the profile itself.
  void error(std::string_view key, std::string message);

private:
  std::string field(const endpoint& e, std::string_view key) const;
  const std::string& file_;
  const profile& profile_;
  config_errors& errors_;
  config_errors& warnings_;
};

/// What the loader needs to know about one routing method.
class profile_rules {
public:
  virtual ~profile_rules() = default;
  /// The name used in config (`method: weighted`).
  virtual std::string_view config_name() const noexcept = 0;
  /// Method-specific checks (unique priorities, one endpoint per region, ...).
  virtual void validate(const profile& p, const config& cfg, profile_report& report) const = 0;
  /// True if the method needs geo.database.
  virtual bool needs_geo() const noexcept { return false; }
  /// True if the method can return more than one endpoint per query (then a
  /// CNAME record cannot use it).
  virtual bool returns_many() const noexcept { return false; }
};

/// The set of methods the loader accepts; core/routing provides the real one
/// (`routing_methods()` in core/routing/all_methods.hpp).
class method_catalog {
public:
  virtual ~method_catalog() = default;
  virtual const profile_rules* find(std::string_view config_name) const noexcept = 0;
  /// "priority, weighted, ..." for error messages.
  virtual std::string names() const = 0;
};

} // namespace gtmesh
