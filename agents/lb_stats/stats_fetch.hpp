#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gtmesh::agents {

class io_runtime;
struct lb_stats_source;

struct stats_text {
  bool ok = false;
  std::string text;  ///< the CSV or the stub_status page
  std::string error; ///< why not ok
};

/// Fetches a stats source without blocking: `show stat` over the HAProxy
/// stats socket (a Unix stream socket; HAProxy closes it after the answer),
/// or an HTTP(S) GET of the CSV page / stub_status URL (status must be 200).
/// The whole exchange must finish within `timeout_ms`; `done` runs once on
/// the I/O thread.
void async_fetch_stats(io_runtime& io, const lb_stats_source& src, int64_t timeout_ms,
                       std::function<void(stats_text)> done);

} // namespace gtmesh::agents
