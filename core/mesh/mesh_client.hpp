#pragma once

// A blocking client of one decider, for command-line tools (gtmeshctl): one
// link over the mesh transport, requests out, replies in, with deadlines.
// No CAF: a tool starts in milliseconds.

#include "core/mesh/envelope.hpp"
#include "core/mesh/transport.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace gtmesh::mesh {

class mesh_client final : private link_events {
public:
  /// Connects and completes the handshake within `timeout`; null with
  /// `error` on failure (unreachable, refused, TLS failure, not a decider).
  static std::unique_ptr<mesh_client> connect(const std::string& target, const node_identity& self,
                                              const tls_files& tls, std::chrono::milliseconds timeout,
                                              std::string& error);
  ~mesh_client() override;

  void send(std::vector<uint8_t> envelope);
  /// The next envelope of one of `kinds` (others are skipped), or nullopt
  /// with `error` when the deadline passes or the link goes down.
  std::optional<envelope> receive(std::initializer_list<message_kind> kinds, std::chrono::milliseconds timeout,
                                  std::string& error);
  /// The decider at the other end.
  const link_peer& peer() const noexcept { return peer_; }

private:
  mesh_client() = default;
  void on_link_up(const link_peer& peer) override;
  void on_link_down(link_id link, uint64_t token, const std::string& reason) override;
  void on_frame(link_id link, std::vector<char>&& frame) override;

  std::unique_ptr<transport> transport_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool up_ = false;
  bool down_ = false;
  std::string down_reason_;
  link_peer peer_;
  std::deque<std::vector<char>> frames_;
};

} // namespace gtmesh::mesh
