#pragma once

// Real users' measurements on a decider: what the --http listener's RUM
// routes call (POST /api/v1/rum/beacons, POST /api/v1/rum/nel, GET
// /api/v1/rum/config for the tag) and what the decider actor publishes
// into its snapshots (docs/rum.md). Thread-safe: the listener's workers and
// the actor call it concurrently; one mutex around the cells, held for the
// apply step only (a body is parsed and checked outside it).
//
// Every request is refused whole or taken beacon by beacon:
//   400 malformed (not JSON, a field of the wrong type)   reason malformed
//   401 no key                                            reason no_key
//   403 a key no app has / an appid no app has            reason bad_key, unknown_app
//   413 a body over rum.max_body                          reason too_large
//   429 a client network over rum.rate_per_address        reason rate_limited
// and, per beacon (counted in IngestResult.failed, nothing stored):
//   unknown_job (no profile endpoint or DC of that name), future_timestamp
//   (more than 60 s ahead), too_old (older than its TTL), no_client (neither
//   an address nor a country), score_only, no_value.
// Nothing of a refused request or beacon is stored, and client addresses
// are truncated (rum.ipv4_prefix / ipv6_prefix) before anything is kept.

#include "core/config/config_model.hpp"
#include "core/net/ip_address.hpp"
#include "core/rum/client_network.hpp"
#include "core/rum/join_notes.hpp"
#include "core/rum/rum_cells.hpp"
#include "core/rum/rum_table.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gtmesh {
class geo_database;
}

namespace gtmesh::rum {

/// Why a request or a beacon was refused (gtmesh_rum_refused_total{reason}).
enum class refusal : uint8_t {
  malformed,
  no_key,
  bad_key,
  unknown_app,
  too_large,
  rate_limited,
  unknown_job,
  future_timestamp,
  too_old,
  no_client,
  score_only,
  no_value,
  disabled,
};
inline constexpr size_t refusal_count = 13;
std::string_view to_string(refusal r) noexcept;

/// A sample as the cells take it: already truncated and resolved.
struct rum_sample {
  uint64_t network = 0;  ///< network_key (or 0 with geography only)
  bool has_network = false;
  uint16_t country = 0;  ///< code16
  uint16_t continent = 0;
  uint32_t asn = 0;
  std::string job;
  uint32_t at_s = 0;
  float latency_ms = NAN;
  bool ok = true;
  float weight = 1;
  uint32_t ttl_s = 0;
  /// The resolver join (join_notes.hpp): the network of the resolver that
  /// asked for the view's name; the sample also feeds key_level::resolver.
  uint64_t resolver = 0;
  bool has_resolver = false;
};

class rum_service {
public:
  struct response {
    int status = 200;
    std::string body;
    std::string content_type = "application/json";
  };
  struct counters {
    uint64_t requests = 0;
    uint64_t accepted = 0; ///< beacons stored
    std::array<uint64_t, refusal_count> refused{};
    uint64_t nel_reports = 0;
    uint64_t peer_samples = 0;
    uint64_t unshared = 0; ///< taken but not sent to peers: the outbox (100,000) was full
    uint64_t cells = 0, evictions = 0, cell_bytes = 0;
    uint64_t publishes = 0;
    uint64_t joined = 0;        ///< measurements also kept for their resolver's network
    uint64_t join_missed = 0;   ///< measurements with a view id no note matched within the wait
  };

  rum_service();
  ~rum_service();

  /// Takes a config's `rum:` section and the jobs it may measure (its
  /// profiles' endpoints and its DCs); `geo` places networks for the
  /// country and continent levels (may be null). A config without `rum:`
  /// turns ingestion off (404) and keeps the cells.
  void configure(const config& cfg, std::shared_ptr<const geo_database> geo);
  bool enabled() const;

  /// POST /api/v1/rum/beacons. `key`: the key= parameter or the
  /// X-Gtmesh-Rum-Key header ("" if neither).
  response beacons(std::string_view body, std::string_view key, const ip_address& remote, int64_t now_ms);
  /// POST /api/v1/rum/nel?app=APP&key=KEY.
  response nel(std::string_view body, std::string_view app, std::string_view key, const ip_address& remote,
               int64_t now_ms);
  /// GET /api/v1/rum/config?app=APP&key=KEY: what the tag measures.
  response tag_config(std::string_view app, std::string_view key, const ip_address& remote, int64_t now_ms);
  /// The CORS origin to allow for `origin` under `app` ("" = none).
  std::string cors_origin(std::string_view app, std::string_view origin) const;
  /// A body larger than this gets 413.
  size_t max_body() const;

  /// The table the next snapshots steer by, built from the cells now.
  rum_table_ptr publish(int64_t now_ms);
  /// When the next publication is due (Unix ms; 0 = now).
  int64_t next_publish_ms() const;

  /// Samples taken here since the last call, for the other deciders
  /// (mesh message rum_samples); at most `max`.
  std::vector<rum_sample> take_outbox(size_t max = 10'000);
  /// Samples another decider took (already checked there).
  void apply_peer(const std::vector<rum_sample>& samples);

  /// Every cell as (level, key, job, estimate), for persistence.
  void for_each_cell(const std::function<void(const cell_key&, std::string_view job, const rum_estimate&)>& f) const;
  /// A cell read back from the store.
  void restore_cell(key_level level, uint64_t key, std::string_view job, const rum_estimate& e);
  /// Cells changed since the last call (the flush writes them).
  bool take_dirty();

  counters stats() const;
  /// The resolver join's notes (the responders note into it through the
  /// published table; the decider actor shares them with its peers).
  const std::shared_ptr<join_notes>& joins() const noexcept { return joins_; }
  /// Beacons whose view id no note matched yet, waiting for one (a peer's
  /// note may come after the beacon); joined at each publish.
  size_t pending_joins() const;
  /// The console's table: networks × endpoints at the prefix level, newest
  /// networks first, at most `max_rows` rows (JSON).
  std::string table_json(int64_t now_ms, size_t max_rows) const;

  /// The same steps as beacons(), without HTTP: for tests and the replay
  /// benchmark. Returns how many were stored.
  size_t ingest(const std::vector<rum_sample>& samples);

private:
  struct app_state;
  struct settings;
  bool rate_ok(uint64_t network, int64_t now_ms, size_t count);
  void apply_locked(const rum_sample& s);
  response refuse(refusal r, int status, const std::string& why);
  /// The checks both ingestion routes make first (counted, the settings in
  /// force taken): RUM on, the body within max_body, a key naming an app
  /// (its index in `app_index`). A refusal, or nullopt.
  std::optional<response> take_request(size_t body_size, std::string_view key, const char* no_key_text,
                                       std::shared_ptr<const settings>& sp, size_t& app_index);
  const app_state* find_app(std::string_view name) const;

  /// Joins `pending_` against the notes (called with mutex_ held).
  void join_pending_locked(int64_t now_ms);

  mutable std::mutex mutex_;
  std::shared_ptr<const settings> settings_;
  std::shared_ptr<join_notes> joins_ = std::make_shared<join_notes>();
  struct waiting {
    std::string view_id;
    rum_sample sample;
    int64_t since_ms = 0;
  };
  std::deque<waiting> pending_; ///< bounded: max_pending, oldest first
  static constexpr size_t max_pending = 10'000;
  static constexpr int64_t pending_wait_ms = 30'000;
  rum_cells cells_;
  uint64_t random_ = 0x853c49e6748fea9bULL;
  std::vector<rum_sample> outbox_;
  bool dirty_ = false;
  int64_t last_publish_ms_ = 0;
  struct bucket {
    double tokens = 0;
    int64_t at_ms = 0;
  };
  std::unordered_map<uint64_t, bucket> buckets_;
  int64_t buckets_swept_ms_ = 0;
  counters counters_;
};

} // namespace gtmesh::rum
