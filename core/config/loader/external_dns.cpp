// The config's external_dns section: what external-dns webhooks published
// (core/decider/external_dns.hpp makes records and profiles of it).

#include "core/config/loader/loader.hpp"

namespace gtmesh::config_loading {

void loader::parse_external_dns(const node& n, const std::string& field) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("external_dns_cluster"));
  str(n, "cluster", field, true);
  each(n, "endpoints", field, [&](const node& e, const std::string& f) {
    if (!is_map(e, f))
      return;
    check_keys(e, f, config_fields::keys_of("external_dns_endpoint"));
    str(e, "dnsName", f, true);
    str(e, "recordType", f, true);
    str(e, "setIdentifier", f);
    str_list(e, "targets", f);
    integer(e, "recordTTL", f, 0, 2147483647);
    integer(e, "weight", f, 1, 1000);
  });
}

} // namespace gtmesh::config_loading
