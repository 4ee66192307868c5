#include "agents/lb_stats/lb_stats_source.hpp"

namespace gtmesh::agents {

std::optional<lb_stats_source> parse_lb_stats_source(std::string_view text) {
  struct prefix {
    std::string_view text;
    lb_stats_source::kind what;
  };
  for (auto p : {prefix{"haproxy-csv:", lb_stats_source::kind::haproxy_csv},
                 prefix{"haproxy:", lb_stats_source::kind::haproxy_socket},
                 prefix{"nginx:", lb_stats_source::kind::nginx_stub_status}}) {
    if (text.starts_with(p.text) && text.size() > p.text.size())
      return lb_stats_source{p.what, std::string(text.substr(p.text.size()))};
  }
  return std::nullopt;
}

} // namespace gtmesh::agents
