// The `datacenters` section: names, locations, access points.

#include "core/config/loader/loader.hpp"

namespace gtmesh::config_loading {

void loader::parse_datacenter(const node& n, const std::string& field) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("datacenter"));
  datacenter dc;
  dc.where = where(n);
  if (auto s = str(n, "name", field, true))
    dc.name = *s;
  if (auto s = str(n, "region", field))
    dc.region = *s;
  dc.location = parse_location(n, field);
  if (node ap = child(n, "access_points")) {
    std::string af = join(field, "access_points");
    if (is_map(ap, af)) {
      check_keys(ap, af, config_fields::keys_of("access_points"));
      for (auto& [s, sn] : str_list(ap, "wan", af))
        dc.wan_access_points.push_back(s);
      for (auto& [s, sn] : str_list(ap, "lan", af))
        dc.lan_access_points.push_back(s);
    }
  }
  if (find_dc(dc.name))
    error(n, join(field, "name"), "duplicate datacenter name '" + dc.name + "'");
  add(dc_index_, cfg_.datacenters, std::move(dc));
}

std::optional<geo_point> loader::parse_location(const node& parent, const std::string& field) {
  node loc = child(parent, "location");
  if (!loc)
    return std::nullopt;
  std::string lf = join(field, "location");
  if (!is_map(loc, lf))
    return std::nullopt;
  check_keys(loc, lf, config_fields::keys_of("location"));
  auto lat = number(loc, "lat", lf, true);
  auto lon = number(loc, "lon", lf, true);
  if (lat && (*lat < -90 || *lat > 90)) {
    error(child(loc, "lat"), join(lf, "lat"), "latitude must be within -90..90");
    return std::nullopt;
  }
  if (lon && (*lon < -180 || *lon > 180)) {
    error(child(loc, "lon"), join(lf, "lon"), "longitude must be within -180..180");
    return std::nullopt;
  }
  if (lat && lon)
    return geo_point{*lat, *lon};
  return std::nullopt;
}

} // namespace gtmesh::config_loading
