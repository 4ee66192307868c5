#include "core/dns/wire/dns_header.hpp"

namespace gtmesh::dns {

std::string_view to_string(rcode r) noexcept {
  switch (r) {
    case rcode::noerror:
      return "NOERROR";
    case rcode::formerr:
      return "FORMERR";
    case rcode::servfail:
      return "SERVFAIL";
    case rcode::nxdomain:
      return "NXDOMAIN";
    case rcode::notimp:
      return "NOTIMP";
    case rcode::refused:
      return "REFUSED";
    case rcode::notauth:
      return "NOTAUTH";
    case rcode::badvers:
      return "BADVERS";
    case rcode::badcookie:
      return "BADCOOKIE";
  }
  return "?";
}

} // namespace gtmesh::dns
