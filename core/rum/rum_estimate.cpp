#include "core/rum/rum_estimate.hpp"

#include <algorithm>

namespace gtmesh::rum {

namespace {

constexpr double unit = 16; // counter units per sample of weight 1 at shift 0
constexpr uint32_t max_count = 65535;

/// A uniform double in [0, 1) from 53 random bits.
double uniform(uint64_t bits) noexcept {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

/// x rounded down or up with probability of its fraction (unbiased).
uint32_t round_stochastic(double x, uint64_t random) noexcept {
  double f = std::floor(x);
  return static_cast<uint32_t>(f) + (uniform(random) < x - f ? 1u : 0u);
}

uint64_t next(uint64_t& s) noexcept { // splitmix64: more bits from one seed
  uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

} // namespace

double bucket_upper_ms(int i) noexcept {
  return i >= latency_buckets - 1 ? INFINITY : std::exp2(i / 2.0);
}

int bucket_of(double ms) noexcept {
  if (!(ms >= 1.0))
    return 0;
  // bucket i holds [2^((i-1)/2), 2^(i/2)): i = floor(2 log2(ms)) + 1
  int i = static_cast<int>(std::floor(2.0 * std::log2(ms))) + 1;
  return std::clamp(i, 1, latency_buckets - 1);
}

void rum_estimate::add_units(int bucket, double units, uint64_t random) noexcept {
  uint32_t add = round_stochastic(units, random);
  while (counts_[bucket] + add > max_count) {
    for (auto& c : counts_)
      c = static_cast<uint16_t>((c + 1) / 2);
    ++shift_;
    units /= 2;
    add = round_stochastic(units, random);
  }
  counts_[bucket] = static_cast<uint16_t>(counts_[bucket] + add);
}

void rum_estimate::decay_to(uint32_t now_s, uint32_t half_life_s, uint64_t random) noexcept {
  if (now_s <= decayed_s_ || half_life_s == 0)
    return;
  const uint32_t dt = now_s - decayed_s_;
  if (dt < std::max<uint32_t>(1, half_life_s / 16) && all_w_ > 0)
    return;
  const double f = std::exp2(-static_cast<double>(dt) / half_life_s);
  ok_w_ = static_cast<float>(ok_w_ * f);
  all_w_ = static_cast<float>(all_w_ * f);
  uint64_t seed = random;
  uint32_t top = 0;
  for (auto& c : counts_) {
    c = static_cast<uint16_t>(round_stochastic(c * f, next(seed)));
    top = std::max<uint32_t>(top, c);
  }
  // Win precision back: double the counters while they fit.
  while (shift_ > 0 && top > 0 && top * 2 <= max_count) {
    for (auto& c : counts_)
      c = static_cast<uint16_t>(c * 2);
    top *= 2;
    --shift_;
  }
  if (top == 0)
    shift_ = 0;
  decayed_s_ = now_s;
}

void rum_estimate::add(uint32_t now_s, double latency_ms, bool ok, float weight, uint32_t ttl_s,
                       uint32_t half_life_s, uint64_t random) noexcept {
  if (!(weight > 0))
    return;
  if (all_w_ <= 0 && decayed_s_ == 0)
    decayed_s_ = now_s;
  // A sample older than the cell's time counts with its own decay.
  double w = weight;
  if (now_s < decayed_s_)
    w *= std::exp2(-static_cast<double>(decayed_s_ - now_s) / std::max<uint32_t>(1, half_life_s));
  else
    decay_to(now_s, half_life_s, random);
  // Weights are expressed at decayed_s_: a sample newer than that (within
  // the lazy step) counts more, as if decayed back.
  if (now_s > decayed_s_)
    w *= std::exp2(static_cast<double>(now_s - decayed_s_) / std::max<uint32_t>(1, half_life_s));
  all_w_ = static_cast<float>(all_w_ + w);
  if (ok)
    ok_w_ = static_cast<float>(ok_w_ + w);
  if (ok && std::isfinite(latency_ms) && latency_ms >= 0) {
    uint64_t seed = random ^ 0x5bd1e995;
    add_units(bucket_of(latency_ms), w * unit / std::exp2(shift_), next(seed));
  }
  last_s_ = std::max(last_s_, now_s);
  const uint32_t t16 = std::min<uint32_t>((ttl_s + 15) / 16, 65535);
  ttl16_ = static_cast<uint16_t>(std::max<uint32_t>(ttl16_, t16));
}

double rum_estimate::latency_weight() const noexcept {
  double sum = 0;
  for (auto c : counts_)
    sum += c;
  return sum;
}

double rum_estimate::quantile(double q) const noexcept {
  const double total = latency_weight();
  if (total <= 0)
    return NAN;
  const double want = q * total;
  double below = 0;
  for (int i = 0; i < latency_buckets; ++i) {
    const double c = counts_[i];
    if (c <= 0 || below + c < want) {
      below += c;
      continue;
    }
    const double frac = std::clamp((want - below) / c, 0.0, 1.0);
    if (i == 0)
      return frac; // [0, 1 ms): linear
    const double lo = std::exp2((i - 1) / 2.0);
    const double hi = i == latency_buckets - 1 ? lo * std::sqrt(2.0) : std::exp2(i / 2.0);
    return lo * std::pow(hi / lo, frac);
  }
  return bucket_upper_ms(latency_buckets - 2);
}

rum_summary rum_estimate::summary(uint32_t now_s, uint32_t half_life_s) const noexcept {
  rum_summary s;
  if (all_w_ <= 0)
    return s;
  const double f = now_s > decayed_s_ && half_life_s > 0
                     ? std::exp2(-static_cast<double>(now_s - decayed_s_) / half_life_s)
                     : 1.0;
  s.samples = static_cast<float>(all_w_ * f);
  s.availability = ok_w_ / all_w_;
  s.p50_ms = static_cast<float>(quantile(0.5));
  s.p90_ms = static_cast<float>(quantile(0.9));
  s.last_s = last_s_;
  s.ttl_s = uint32_t{ttl16_} * 16;
  return s;
}

void rum_estimate::merge(const rum_estimate& other, uint32_t now_s, uint32_t half_life_s, uint64_t random) noexcept {
  if (other.all_w_ <= 0)
    return;
  rum_estimate o = other;
  decay_to(now_s, half_life_s, random);
  o.decay_to(now_s, half_life_s, random ^ 1);
  if (all_w_ <= 0 && decayed_s_ == 0)
    decayed_s_ = o.decayed_s_;
  const double f = o.decayed_s_ < decayed_s_
                     ? std::exp2(-static_cast<double>(decayed_s_ - o.decayed_s_) / std::max<uint32_t>(1, half_life_s))
                     : 1.0;
  all_w_ = static_cast<float>(all_w_ + o.all_w_ * f);
  ok_w_ = static_cast<float>(ok_w_ + o.ok_w_ * f);
  uint64_t seed = random;
  for (int i = 0; i < latency_buckets; ++i)
    if (o.counts_[i] > 0)
      add_units(i, o.counts_[i] * std::exp2(o.shift_) / std::exp2(shift_) * f, next(seed));
  last_s_ = std::max(last_s_, o.last_s_);
  ttl16_ = std::max(ttl16_, o.ttl16_);
}

rum_estimate::raw rum_estimate::state() const noexcept {
  raw r;
  r.counts = counts_;
  r.shift = shift_;
  r.ttl_s = ttl16_;
  r.ok_w = ok_w_;
  r.all_w = all_w_;
  r.decayed_s = decayed_s_;
  r.last_s = last_s_;
  return r;
}

rum_estimate rum_estimate::from(const raw& r) noexcept {
  rum_estimate e;
  e.counts_ = r.counts;
  e.shift_ = std::min<uint8_t>(r.shift, 60);
  e.ttl16_ = r.ttl_s;
  e.ok_w_ = std::isfinite(r.ok_w) && r.ok_w >= 0 ? r.ok_w : 0;
  e.all_w_ = std::isfinite(r.all_w) && r.all_w >= 0 ? r.all_w : 0;
  e.ok_w_ = std::min(e.ok_w_, e.all_w_);
  e.decayed_s_ = r.decayed_s;
  e.last_s_ = r.last_s;
  return e;
}

static_assert(sizeof(rum_estimate) == 72, "a cell's estimate stays at 72 bytes (docs/rum.md)");

} // namespace gtmesh::rum
