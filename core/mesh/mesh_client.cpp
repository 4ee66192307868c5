#include "core/mesh/mesh_client.hpp"

#include <algorithm>

namespace gtmesh::mesh {

std::unique_ptr<mesh_client> mesh_client::connect(const std::string& target, const node_identity& self,
                                                  const tls_files& tls, std::chrono::milliseconds timeout,
                                                  std::string& error) {
  std::unique_ptr<mesh_client> c(new mesh_client());
  transport_options o;
  o.self = self;
  o.tls = tls;
  o.connect_timeout = timeout;
  o.handshake_timeout = timeout;
  // A tool may wait on a slow answer (a dry run of a large config): no idle
  // timeout on our side; the decider's heartbeats keep the link alive.
  o.idle_timeout = std::chrono::hours(24);
  o.admit = [](const node_identity& peer, bool) {
    return peer.role == node_role::decider ? std::string() : "it is not a decider (" + peer.describe() + ")";
  };
  c->transport_ = transport::create(o, *c, error);
  if (!c->transport_)
    return nullptr;
  c->transport_->connect(target, 1);
  std::unique_lock lock(c->mutex_);
  if (!c->changed_.wait_for(lock, timeout + std::chrono::milliseconds(500), [&] { return c->up_ || c->down_; })) {
    error = "no answer from " + target + " within " + std::to_string(timeout.count()) + " ms";
    return nullptr;
  }
  if (!c->up_) {
    error = c->down_reason_;
    return nullptr;
  }
  return c;
}

mesh_client::~mesh_client() {
  if (transport_)
    transport_->stop();
}

void mesh_client::send(std::vector<uint8_t> envelope) {
  transport_->send(peer_.link, std::move(envelope));
}

std::optional<envelope> mesh_client::receive(std::initializer_list<message_kind> kinds,
                                             std::chrono::milliseconds timeout, std::string& error) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mutex_);
  for (;;) {
    while (!frames_.empty()) {
      std::vector<char> f = std::move(frames_.front());
      frames_.pop_front();
      decode_error err;
      auto env = decode(reinterpret_cast<const uint8_t*>(f.data()), f.size(), err);
      if (env && std::find(kinds.begin(), kinds.end(), env->kind) != kinds.end())
        return env;
    }
    if (down_) {
      error = "the decider closed the link: " + down_reason_;
      return std::nullopt;
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && frames_.empty() && !down_) {
      error = "no answer within " + std::to_string(timeout.count()) + " ms";
      return std::nullopt;
    }
  }
}

void mesh_client::on_link_up(const link_peer& peer) {
  std::lock_guard lock(mutex_);
  peer_ = peer;
  up_ = true;
  changed_.notify_all();
}

void mesh_client::on_link_down(link_id, uint64_t, const std::string& reason) {
  std::lock_guard lock(mutex_);
  down_ = true;
  down_reason_ = reason;
  changed_.notify_all();
}

void mesh_client::on_frame(link_id, std::vector<char>&& frame) {
  std::lock_guard lock(mutex_);
  frames_.push_back(std::move(frame));
  changed_.notify_all();
}

} // namespace gtmesh::mesh
