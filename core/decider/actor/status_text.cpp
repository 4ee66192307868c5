#include "core/decider/actor/status_text.hpp"

#include "core/consensus/cluster_backup.hpp"
#include "core/decider/actor/links.hpp"
#include "core/decider/actor/serving.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/mesh/config_compression.hpp"
#include "core/routing/decision_trace.hpp"
#include "core/text/display_text.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <sstream>

namespace gtmesh::decider::actor {

using namespace gtmesh::mesh;

namespace {

std::string links_text(decider_self self) {
  auto& st = self->state;
  std::ostringstream out;
  out << "  peers:";
  if (st.peers.empty())
    out << " none";
  for (const auto& p : st.peers) {
    out << " " << p.address;
    if (p.link) {
      auto it = st.links.find(p.link);
      out << " (" << (it != st.links.end() ? it->second.identity.name : std::string("?")) << ", connected";
      if (it != st.links.end()) {
        std::string lacking = lacking_capabilities(it->second);
        if (!lacking.empty())
          out << ", an older gtmesh without " << lacking;
      }
      out << ")";
    } else {
      out << " (down)";
    }
  }
  out << "\n";
  if (st.options.transport) {
    auto c = st.options.transport->counters();
    out << "  mesh links: " << st.links.size() << " up; " << c.accepted << " connections accepted, "
        << c.refused_pending << " refused (too many handshakes), " << c.evicted_pending
        << " evicted (the oldest handshake made room), " << c.handshake_timeouts << " handshake timeouts, "
        << c.handshake_failures << " failed handshakes, " << c.refused_peers << " peers refused, "
        << c.protocol_refused << " refused (no mesh protocol in common), " << c.idle_timeouts
        << " idle timeouts, " << c.oversized_frames << " oversized frames";
    if (c.revoked_refused || c.revoked_closed)
      out << ", " << c.revoked_refused << " revoked certificates refused, " << c.revoked_closed
          << " links closed by a revocation";
    out << "\n";
  }
  return out.str();
}

} // namespace

std::string status_text(decider_self self) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  std::ostringstream out;
  out << st.core->status_text(now) << links_text(self);
  if (!not_answering(st).empty())
    out << "  NOT ANSWERING DNS: " << not_answering(st) << "\n";
  for (const auto& [origin, n] : st.nodes)
    out << "  node " << origin << " (dc " << n.dc << "): config version " << n.config_version << ", " << n.status
        << ", reported " << format_age(now - n.at_ms) << " ago\n";
  if (st.signed_only)
    out << "  signed-only policy: on, set by " << st.signed_only_by
        << " (only actions gtmeshctl signs apply; the console, the HTTP API and the webhook change nothing)\n";
  for (const auto& r : st.revoked)
    out << "  revoked: certificate serial " << r.serial << " (" << (r.subject.empty() ? "?" : r.subject) << ") by "
        << r.by << " (log index " << r.index << ")\n";
  out << "  frames: " << st.frames << " received";
  for (const auto& [why, count] : st.rejected)
    out << ", " << count << " dropped (" << why << ")";
  out << "\n";
  if (st.options.faults) {
    std::string faults = st.options.faults->describe();
    if (!faults.empty())
      out << "  fault hooks:\n" << faults;
  }
  return out.str();
}

std::shared_ptr<decider_status> take_status(decider_self self, int64_t now) {
  auto& st = self->state;
  auto s = std::make_shared<decider_status>(st.core->status(now));
  s->not_answering = not_answering(st);
  for (const auto& p : st.peers) {
    peer_status ps{p.address, "", p.link != 0};
    if (auto it = st.links.find(p.link); p.link && it != st.links.end())
      ps.name = it->second.identity.name;
    s->peers.push_back(std::move(ps));
  }
  s->links_up = static_cast<int>(st.links.size());
  s->zone_view_counters = {st.transfer_views.proposed, st.transfer_views.committed, st.transfer_views.refused};
  s->frames_received = st.frames;
  s->frames_dropped = st.rejected;
  if (st.options.transport) {
    auto c = st.options.transport->counters();
    s->frames_in = c.frames_in;
    s->frames_out = c.frames_out;
    s->connections = {{"accepted", c.accepted},
                      {"refused_pending", c.refused_pending},
                      {"evicted_pending", c.evicted_pending},
                      {"handshake_timeouts", c.handshake_timeouts},
                      {"handshake_failures", c.handshake_failures},
                      {"refused_peers", c.refused_peers},
                      {"protocol_refused", c.protocol_refused},
                      {"idle_timeouts", c.idle_timeouts},
                      {"oversized_frames", c.oversized_frames},
                      {"slow_peers", c.slow_peers},
                      {"revoked_refused", c.revoked_refused},
                      {"revoked_closed", c.revoked_closed},
                      {"tls_reloads", c.tls_reloads}};
  }
  return s;
}

void publish_status(decider_self self) {
  auto& st = self->state;
  if (!st.options.board)
    return;
  int64_t now = wall_clock_ms();
  st.status_published_ms = now;
  st.options.board->publish(take_status(self, now));
}

std::string with_config_texts(decider_self self, const std::vector<char>& bytes, size_t reply_limit) {
  consensus::cluster_backup b;
  std::string error;
  if (!consensus::decode_backup(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), b, error))
    return std::string(bytes.begin(), bytes.end()); // cannot happen; the restore checks it again
  consensus::replicated_state s;
  s.restore(b.state.data(), b.state.size());
  std::map<uint32_t, std::string> sha_of;
  for (const auto& h : s.history())
    sha_of[h.version] = h.sha256;
  // Newest first, one text at a time (each may be hundreds of MB), each
  // measured as it travels (compressed), until the reply is full; the rest
  // are counted without being read.
  size_t used = bytes.size();
  bool full = false;
  for (uint32_t version : self->state.core->stored_config_versions()) {
    auto it = sha_of.find(version);
    if (version >= s.config_version() || it == sha_of.end())
      continue;
    if (full) {
      ++b.configs_left_out;
      continue;
    }
    auto c = self->state.core->stored_config_before(version + 1);
    if (!c || c->version != version)
      continue; // damaged: not backed up
    if (consensus::sha256_hex(c->yaml) != it->second)
      continue;
    std::string plain, compressed;
    mesh::put_config_text(c->yaml, c->packed, plain, compressed);
    const size_t cost = plain.size() + compressed.size() + c->file.size() + 256;
    if (used + cost > reply_limit) {
      full = true;
      ++b.configs_left_out;
      continue;
    }
    used += cost;
    b.configs.push_back(consensus::backup_config_text{c->version, std::move(c->yaml), std::move(c->file), c->at_ms});
  }
  std::vector<uint8_t> out = consensus::encode_backup(b);
  return std::string(out.begin(), out.end());
}

} // namespace gtmesh::decider::actor
