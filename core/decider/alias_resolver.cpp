#include "core/decider/alias_resolver.hpp"

#include <algorithm>

namespace gtmesh::decider {

namespace {

constexpr int64_t first_retry_ms = 1'000;

std::string verdict_text(const lookup_result& r) {
  return std::string(dns::to_string(r.verdict)) + (r.server.empty() ? "" : " from " + r.server);
}

} // namespace

uint32_t alias_resolver::clamp(uint32_t ttl) const noexcept {
  return std::clamp(ttl, settings_.min_ttl, settings_.max_ttl);
}

void alias_resolver::configure(const resolver_settings& settings, const std::vector<std::string>& names,
                               int64_t now_ms) {
  settings_ = settings;
  std::map<std::string, name_state> next;
  for (const auto& n : names) {
    auto it = names_.find(n);
    if (it != names_.end()) {
      name_state s = std::move(it->second);
      s.ttl = s.resolved_at_ms ? clamp(s.given_ttl) : 0; // the bounds may have moved
      s.next_ms = std::min(s.next_ms, now_ms + int64_t{settings_.max_ttl} * 1000);
      next.emplace(n, std::move(s));
    } else {
      name_state s;
      s.next_ms = now_ms;
      next.emplace(n, std::move(s));
    }
  }
  names_ = std::move(next);
  for (auto& [n, s] : names_)
    publish(n, s);
  ++version_;
}

void alias_resolver::restore(const stored_alias& stored, int64_t now_ms) {
  auto it = names_.find(stored.name);
  if (it == names_.end() || it->second.resolved_at_ms != 0 || stored.resolved_at_ms == 0 ||
      now_ms - stored.resolved_at_ms > settings_.keep_last_good_ms || (stored.a.empty() && stored.aaaa.empty()))
    return;
  name_state& s = it->second;
  s.a = stored.a;
  s.aaaa = stored.aaaa;
  s.given_ttl = stored.ttl;
  s.ttl = clamp(stored.ttl);
  s.resolved_at_ms = stored.resolved_at_ms;
  s.server = "the store (before a restart)";
  publish(it->first, s);
  ++version_;
}

void alias_resolver::expire(name_state& s, int64_t now_ms) {
  if (s.resolved_at_ms == 0 || (s.a.empty() && s.aaaa.empty()))
    return;
  const bool gone = s.negative_since_ms != 0 && now_ms - s.negative_since_ms >= settings_.keep_on_nxdomain_ms;
  const bool too_old = s.failures > 0 && now_ms - s.resolved_at_ms >= settings_.keep_last_good_ms;
  if (!gone && !too_old)
    return;
  s.a.clear();
  s.aaaa.clear();
  s.dropped = true;
  s.negative_known = gone;
  ++counters_.dropped;
}

std::vector<std::string> alias_resolver::due(int64_t now_ms) {
  std::vector<std::string> out;
  for (auto& [name, s] : names_) {
    const bool had = !s.a.empty() || !s.aaaa.empty();
    expire(s, now_ms);
    if (had && s.a.empty() && s.aaaa.empty()) {
      publish(name, s);
      ++version_;
    }
    if (!s.in_flight && now_ms >= s.next_ms) {
      s.in_flight = true;
      out.push_back(name);
    }
  }
  return out;
}

int64_t alias_resolver::next_due_ms() const noexcept {
  int64_t next = std::numeric_limits<int64_t>::max();
  for (const auto& [name, s] : names_) {
    if (!s.in_flight)
      next = std::min(next, s.next_ms);
    if (s.resolved_at_ms != 0 && (!s.a.empty() || !s.aaaa.empty())) {
      if (s.failures > 0)
        next = std::min(next, s.resolved_at_ms + settings_.keep_last_good_ms);
      if (s.negative_since_ms != 0)
        next = std::min(next, s.negative_since_ms + settings_.keep_on_nxdomain_ms);
    }
  }
  return next;
}

void alias_resolver::complete(const std::string& name, const lookup_result& a, const lookup_result& aaaa,
                              int64_t now_ms) {
  auto it = names_.find(name);
  if (it == names_.end())
    return; // no longer configured
  name_state& s = it->second;
  s.in_flight = false;
  ++counters_.refreshes;
  const bool a_has = a.answered && a.verdict == dns::reply_verdict::addresses;
  const bool aaaa_has = aaaa.answered && aaaa.verdict == dns::reply_verdict::addresses;
  const int64_t min_ms = int64_t{settings_.min_ttl} * 1000;
  if (a_has || aaaa_has) {
    // A good resolution; a family that failed keeps its last addresses.
    uint32_t ttl = UINT32_MAX;
    if (a.answered) {
      s.a = a.addresses;
      if (a_has)
        ttl = std::min(ttl, a.ttl);
    }
    if (aaaa.answered) {
      s.aaaa = aaaa.addresses;
      if (aaaa_has)
        ttl = std::min(ttl, aaaa.ttl);
    }
    s.given_ttl = ttl;
    s.ttl = clamp(ttl);
    s.server = a_has ? a.server : aaaa.server;
    s.resolved_at_ms = now_ms;
    s.negative_since_ms = 0;
    s.negative.clear();
    s.dropped = false;
    s.negative_known = false;
    if (a.answered && aaaa.answered) {
      s.failures = 0;
      s.last_failure.clear();
    } else {
      // One family failed: said, counted, and asked again with the next refresh.
      ++counters_.partial;
      s.failures = 1; // this refresh, half failed; the ones before it are past
      s.failed_at_ms = now_ms;
      const lookup_result& bad = a.answered ? aaaa : a;
      s.last_failure = std::string(a.answered ? "AAAA" : "A") + ": " + bad.detail;
    }
    s.next_ms = now_ms + int64_t{s.ttl} * 1000;
  } else if (a.answered && aaaa.answered) {
    // The name, or every address of it, is gone.
    ++counters_.negative;
    const lookup_result& said = a.verdict == dns::reply_verdict::nxdomain ? a : aaaa;
    const bool had = !s.a.empty() || !s.aaaa.empty();
    if (!had) {
      // Nothing to keep: known to have no addresses.
      s.a.clear();
      s.aaaa.clear();
      s.negative_known = true;
      s.resolved_at_ms = now_ms;
      s.given_ttl = std::min(a.ttl, aaaa.ttl);
      s.ttl = clamp(s.given_ttl);
      s.server = said.server;
      s.next_ms = now_ms + int64_t{s.ttl} * 1000;
    } else {
      if (s.negative_since_ms == 0)
        s.negative_since_ms = now_ms;
      s.next_ms = now_ms + min_ms;
    }
    s.negative = verdict_text(said) + " for " + std::string(a.verdict == dns::reply_verdict::nxdomain ? "the name" : "A and AAAA");
    s.failures = 0;
    s.last_failure.clear();
    expire(s, now_ms);
  } else {
    // Nothing answered: keep the last good addresses, try again soon.
    ++counters_.failures;
    ++s.failures;
    s.failed_at_ms = now_ms;
    s.last_failure = (a.answered ? aaaa.detail : a.detail);
    const int shift = static_cast<int>(std::min<uint64_t>(s.failures - 1, 16));
    s.next_ms = now_ms + std::clamp<int64_t>(first_retry_ms << shift, first_retry_ms, std::max(first_retry_ms, min_ms));
    expire(s, now_ms);
  }
  publish(name, s);
  ++version_;
}

void alias_resolver::publish(const std::string& name, name_state& s) {
  alias_resolution& r = s.shown;
  r.a = s.a;
  r.aaaa = s.aaaa;
  r.known = !s.a.empty() || !s.aaaa.empty() || s.negative_known;
  // While refreshes fail, answers carry at most min_ttl: resolvers come back
  // soon, and find the new addresses as soon as there are some.
  r.ttl = s.failures > 0 || s.negative_since_ms != 0 ? std::min(s.ttl, settings_.min_ttl) : s.ttl;
  r.resolved_at_ms = s.resolved_at_ms;
  r.failed_at_ms = s.failed_at_ms;
  r.failures = s.failures;
  r.last_failure = s.last_failure;
  std::string e;
  if (s.resolved_at_ms != 0) {
    e = "from " + s.server;
    if (s.given_ttl != s.ttl)
      e += ", TTL " + std::to_string(s.given_ttl) + " s " + (s.given_ttl < s.ttl ? "raised to min_ttl" : "lowered to max_ttl");
  }
  if (s.negative_since_ms != 0 && r.known && !s.negative_known)
    e += std::string(e.empty() ? "" : "; ") + s.negative + ": the last good addresses are kept " +
         "for keep_on_nxdomain";
  else if (s.negative_known)
    e += std::string(e.empty() ? "" : "; ") + "the resolvers say the name has no address (" + s.negative + ")";
  else if (s.dropped)
    e += std::string(e.empty() ? "" : "; ") + "the last good addresses were dropped (keep_last_good passed)";
  else if (s.failures > 0 && r.known)
    e += std::string(e.empty() ? "" : "; ") + "answering the last good addresses";
  r.explain = std::move(e);
}

const alias_resolution* alias_resolver::find(const std::string& name) const {
  auto it = names_.find(name);
  return it == names_.end() ? nullptr : &it->second.shown;
}

std::map<std::string, alias_resolution> alias_resolver::all() const {
  std::map<std::string, alias_resolution> out;
  for (const auto& [name, s] : names_)
    out.emplace(name, s.shown);
  return out;
}

std::vector<stored_alias> alias_resolver::to_store() const {
  std::vector<stored_alias> out;
  for (const auto& [name, s] : names_)
    if (s.resolved_at_ms != 0 && (!s.a.empty() || !s.aaaa.empty()))
      out.push_back(stored_alias{name, s.a, s.aaaa, s.given_ttl, s.resolved_at_ms});
  return out;
}

} // namespace gtmesh::decider
