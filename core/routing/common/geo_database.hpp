#pragma once

#include "core/config/config_model.hpp"
#include "core/geo/region.hpp"
#include "core/net/ip_address.hpp"

#include <memory>
#include <optional>
#include <string>

struct MMDB_s;

namespace gtmesh {

/// What the geo database says about one address.
struct geo_info {
  bool found = false;       ///< a continent, a country or a location is known
  char continent[3] = {};   ///< "EU"
  char country[3] = {};     ///< ISO 3166-1, "DE"
  char subdivision[4] = {}; ///< ISO 3166-2 suffix, "CA" of US-CA
  bool has_location = false;
  /// The location is the continent's centre, not the database's: the
  /// network has a continent but no coordinates (EU-wide and anycast ranges).
  bool location_is_continent = false;
  geo_point location;
  int scope = 0; ///< prefix length (address family) of the database network

  /// Region codes from most to least specific (subdivision only for AU, CA
  /// and US; the grouping also when only the continent is known); returns how
  /// many were written (at most 4, WORLD always last).
  int regions(region_code out[4]) const noexcept;
};

/// A MaxMind DB (GeoLite2 / GeoIP2 / DB-IP, country or city edition) opened
/// read-only with mmap, and optionally an ASN database beside it
/// (GeoLite2-ASN or any MaxMind DB whose records hold
/// `autonomous_system_number`). Lookups allocate nothing and are thread-safe.
class geo_database {
public:
  /// Opens `path`; on failure returns nullptr and sets `error`.
  static std::shared_ptr<geo_database> open(const std::string& path, std::string& error);
  /// Opens the ASN database beside it (before the first lookup); false and
  /// `error` when the file is no MaxMind DB or holds no ASN data.
  bool open_asn(const std::string& asn_path, std::string& error);
  ~geo_database();
  geo_database(const geo_database&) = delete;
  geo_database& operator=(const geo_database&) = delete;

  geo_info lookup(const ip_address& address) const noexcept;
  /// The autonomous system `address` is announced from: from the ASN
  /// database when one is open, else from the geo database's own
  /// `autonomous_system_number` (combined editions have it); 0 = unknown.
  /// Not part of lookup(): geographic routing never pays for it.
  uint32_t asn(const ip_address& address) const noexcept;
  /// An ASN database is open, or the geo database has ASN data.
  bool has_asn() const noexcept { return has_asn_; }
  const std::string& path() const noexcept { return path_; }
  const std::string& asn_path() const noexcept { return asn_path_; }

private:
  geo_database() = default;
  std::unique_ptr<MMDB_s> db_;
  std::unique_ptr<MMDB_s> asn_db_;
  bool has_asn_ = false;
  std::string path_;
  std::string asn_path_;
};

/// What a trace says of a client's geo data: "geo: continent EU, country
/// DE, subdivision HE, location 50.11,8.68 (network /24)".
std::string describe_geo(const geo_info& g);

/// The approximate centre of a continent (AF AN AS EU NA OC SA), for a
/// client whose network the database places on a continent only; nullopt
/// for any other code.
std::optional<geo_point> continent_centre(std::string_view continent) noexcept;

/// Great-circle distance in km.
double distance_km(const geo_point& a, const geo_point& b) noexcept;

} // namespace gtmesh
