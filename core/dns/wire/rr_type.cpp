#include "core/dns/wire/rr_type.hpp"

#include <cctype>

namespace gtmesh::dns {

std::string_view to_string(rr_type t) noexcept {
  switch (t) {
    case rr_type::a:
      return "A";
    case rr_type::ns:
      return "NS";
    case rr_type::cname:
      return "CNAME";
    case rr_type::soa:
      return "SOA";
    case rr_type::ptr:
      return "PTR";
    case rr_type::mx:
      return "MX";
    case rr_type::txt:
      return "TXT";
    case rr_type::aaaa:
      return "AAAA";
    case rr_type::srv:
      return "SRV";
    case rr_type::opt:
      return "OPT";
    case rr_type::any:
      return "ANY";
    case rr_type::alias:
      return "ALIAS";
  }
  return "?";
}

std::optional<rr_type> parse_rr_type(std::string_view name) noexcept {
  char up[8];
  if (name.empty() || name.size() >= sizeof(up))
    return std::nullopt;
  for (size_t i = 0; i < name.size(); ++i)
    up[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[i])));
  std::string_view u(up, name.size());
  for (rr_type t : {rr_type::a, rr_type::ns, rr_type::cname, rr_type::soa, rr_type::mx, rr_type::txt,
                    rr_type::aaaa, rr_type::srv, rr_type::any, rr_type::alias, rr_type::ptr})
    if (to_string(t) == u)
      return t;
  return std::nullopt;
}

} // namespace gtmesh::dns
