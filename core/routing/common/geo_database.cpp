#include "core/routing/common/geo_database.hpp"

#include <maxminddb.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <netinet/in.h>

namespace gtmesh {

int geo_info::regions(region_code out[4]) const noexcept {
  int n = 0;
  std::string_view c(country);
  if (!c.empty()) {
    if (subdivision[0] && (c == "US" || c == "CA" || c == "AU")) {
      char buf[8] = {};
      size_t len = std::strlen(subdivision);
      buf[0] = country[0];
      buf[1] = country[1];
      buf[2] = '-';
      std::memcpy(buf + 3, subdivision, std::min<size_t>(len, 3));
      out[n++] = pack_region(std::string_view(buf, 3 + std::min<size_t>(len, 3)));
    }
    out[n++] = pack_region(c);
  }
  // The grouping also when the database knows the continent only.
  if (region_code g = grouping_of(c, continent))
    out[n++] = g;
  out[n++] = world_region;
  return n;
}

namespace {

bool open_mmdb(const std::string& path, std::unique_ptr<MMDB_s>& db, std::string& error) {
  db = std::make_unique<MMDB_s>();
  int status = MMDB_open(path.c_str(), MMDB_MODE_MMAP, db.get());
  if (status != MMDB_SUCCESS) {
    error = path + ": " + MMDB_strerror(status);
    db.reset();
    return false;
  }
  return true;
}

MMDB_lookup_result_s lookup_in(MMDB_s* db, const ip_address& address, int& mmdb_error) noexcept {
  if (address.v4()) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(address.v4_host_order());
    return MMDB_lookup_sockaddr(db, reinterpret_cast<const sockaddr*>(&sa), &mmdb_error);
  }
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  address.to_bytes(sa.sin6_addr.s6_addr);
  return MMDB_lookup_sockaddr(db, reinterpret_cast<const sockaddr*>(&sa), &mmdb_error);
}

/// Whether the database's records carry `autonomous_system_number`: its
/// type names ASN, or a record found at a well-populated address has one.
bool carries_asn(MMDB_s* db) {
  if (db->metadata.database_type && std::strstr(db->metadata.database_type, "ASN"))
    return true;
  for (const char* probe : {"1.1.1.1", "8.8.8.8", "2001:4860::1"}) {
    auto a = ip_address::parse(probe);
    int e = 0;
    MMDB_lookup_result_s r = lookup_in(db, *a, e);
    MMDB_entry_data_s d;
    if (e == MMDB_SUCCESS && r.found_entry &&
        MMDB_get_value(&r.entry, &d, "autonomous_system_number", nullptr) == MMDB_SUCCESS && d.has_data)
      return true;
  }
  return false;
}

} // namespace

std::shared_ptr<geo_database> geo_database::open(const std::string& path, std::string& error) {
  std::shared_ptr<geo_database> db(new geo_database());
  if (!open_mmdb(path, db->db_, error))
    return nullptr;
  db->path_ = path;
  db->has_asn_ = carries_asn(db->db_.get());
  return db;
}

bool geo_database::open_asn(const std::string& asn_path, std::string& error) {
  std::unique_ptr<MMDB_s> asn;
  if (!open_mmdb(asn_path, asn, error))
    return false;
  if (!carries_asn(asn.get())) {
    error = asn_path + ": not an ASN database (its type is '" +
            std::string(asn->metadata.database_type ? asn->metadata.database_type : "") +
            "' and its records hold no autonomous_system_number)";
    MMDB_close(asn.get());
    return false;
  }
  asn_db_ = std::move(asn);
  asn_path_ = asn_path;
  has_asn_ = true;
  return true;
}

geo_database::~geo_database() {
  if (db_)
    MMDB_close(db_.get());
  if (asn_db_)
    MMDB_close(asn_db_.get());
}

uint32_t geo_database::asn(const ip_address& address) const noexcept {
  MMDB_s* db = asn_db_ ? asn_db_.get() : db_.get();
  if (!db || !has_asn_)
    return 0;
  int mmdb_error = 0;
  MMDB_lookup_result_s r = lookup_in(db, address, mmdb_error);
  if (mmdb_error != MMDB_SUCCESS || !r.found_entry)
    return 0;
  MMDB_entry_data_s d;
  if (MMDB_get_value(&r.entry, &d, "autonomous_system_number", nullptr) != MMDB_SUCCESS || !d.has_data)
    return 0;
  switch (d.type) {
  case MMDB_DATA_TYPE_UINT32: return d.uint32;
  case MMDB_DATA_TYPE_UINT16: return d.uint16;
  case MMDB_DATA_TYPE_UINT64: return d.uint64 <= UINT32_MAX ? static_cast<uint32_t>(d.uint64) : 0;
  case MMDB_DATA_TYPE_INT32: return d.int32 > 0 ? static_cast<uint32_t>(d.int32) : 0;
  default: return 0;
  }
}

namespace {

void copy_string(const MMDB_entry_data_s& d, char* out, size_t cap) {
  if (!d.has_data || d.type != MMDB_DATA_TYPE_UTF8_STRING)
    return;
  size_t n = std::min<size_t>(d.data_size, cap - 1);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(d.utf8_string[i])));
  out[n] = 0;
}

double to_double(const MMDB_entry_data_s& d) {
  if (!d.has_data)
    return NAN;
  if (d.type == MMDB_DATA_TYPE_DOUBLE)
    return d.double_value;
  if (d.type == MMDB_DATA_TYPE_FLOAT)
    return d.float_value;
  return NAN;
}

} // namespace

geo_info geo_database::lookup(const ip_address& address) const noexcept {
  geo_info g;
  if (!db_)
    return g;
  int mmdb_error = 0;
  MMDB_lookup_result_s r = lookup_in(db_.get(), address, mmdb_error);
  if (mmdb_error != MMDB_SUCCESS)
    return g;
  // netmask counts bits of the database's tree (128 for an IPv6 tree even
  // for IPv4 lookups).
  int netmask = r.netmask;
  if (address.v4() && db_->metadata.ip_version == 6)
    netmask = std::max(0, netmask - 96);
  g.scope = netmask;
  if (!r.found_entry)
    return g;
  MMDB_entry_data_s d;
  if (MMDB_get_value(&r.entry, &d, "country", "iso_code", nullptr) == MMDB_SUCCESS)
    copy_string(d, g.country, sizeof(g.country));
  if (!g.country[0] && MMDB_get_value(&r.entry, &d, "registered_country", "iso_code", nullptr) == MMDB_SUCCESS)
    copy_string(d, g.country, sizeof(g.country));
  if (MMDB_get_value(&r.entry, &d, "continent", "code", nullptr) == MMDB_SUCCESS)
    copy_string(d, g.continent, sizeof(g.continent));
  if (MMDB_get_value(&r.entry, &d, "subdivisions", "0", "iso_code", nullptr) == MMDB_SUCCESS)
    copy_string(d, g.subdivision, sizeof(g.subdivision));
  MMDB_entry_data_s lat, lon;
  if (MMDB_get_value(&r.entry, &lat, "location", "latitude", nullptr) == MMDB_SUCCESS &&
      MMDB_get_value(&r.entry, &lon, "location", "longitude", nullptr) == MMDB_SUCCESS) {
    double a = to_double(lat), b = to_double(lon);
    if (!std::isnan(a) && !std::isnan(b)) {
      g.has_location = true;
      g.location = geo_point{a, b};
    }
  }
  if (!g.has_location && g.continent[0]) {
    if (auto centre = continent_centre(g.continent)) {
      g.has_location = true;
      g.location_is_continent = true;
      g.location = *centre;
    }
  }
  g.found = g.country[0] != 0 || g.continent[0] != 0 || g.has_location;
  return g;
}

std::string describe_geo(const geo_info& g) {
  if (!g.found)
    return "geo: the database knows nothing of the client (network /" + std::to_string(g.scope) + ")";
  std::string out = "geo:";
  auto part = [&](const char* label, std::string_view value) {
    out += out.size() > 4 ? ", " : " ";
    out += label;
    out += ' ';
    out += value.empty() ? std::string_view("none") : value;
  };
  part("continent", g.continent);
  part("country", g.country);
  if (g.subdivision[0])
    part("subdivision", g.subdivision);
  if (g.has_location) {
    char at[64];
    std::snprintf(at, sizeof(at), "%.2f,%.2f%s", g.location.lat, g.location.lon,
                  g.location_is_continent ? " (the continent's centre)" : "");
    part("location", at);
  }
  return out + " (network /" + std::to_string(g.scope) + ")";
}

std::optional<geo_point> continent_centre(std::string_view continent) noexcept {
  // Geographic centres of the continents' land, rounded to a degree: good
  // enough to rank data centers continents apart.
  struct centre {
    std::string_view code;
    geo_point at;
  };
  static constexpr centre centres[] = {
    {"AF", {7.0, 21.0}},   {"AN", {-83.0, 135.0}}, {"AS", {34.0, 100.0}}, {"EU", {54.0, 15.0}},
    {"NA", {47.0, -100.0}}, {"OC", {-23.0, 140.0}}, {"SA", {-15.0, -58.0}},
  };
  for (const centre& c : centres)
    if (c.code == continent)
      return c.at;
  return std::nullopt;
}

double distance_km(const geo_point& a, const geo_point& b) noexcept {
  constexpr double rad = M_PI / 180.0;
  double dlat = (b.lat - a.lat) * rad;
  double dlon = (b.lon - a.lon) * rad;
  double h = std::sin(dlat / 2) * std::sin(dlat / 2) +
             std::cos(a.lat * rad) * std::cos(b.lat * rad) * std::sin(dlon / 2) * std::sin(dlon / 2);
  return 2 * 6371.0 * std::asin(std::min(1.0, std::sqrt(h)));
}

} // namespace gtmesh
