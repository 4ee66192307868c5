#include "core/rum/rum_persist.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

namespace gtmesh::rum {

namespace {

template <class T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

struct reader {
  std::string_view in;
  size_t at = 0;
  bool ok = true;
  template <class T>
  T get() {
    T v{};
    if (!ok || at + sizeof(T) > in.size()) {
      ok = false;
      return v;
    }
    std::memcpy(&v, in.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  std::string_view bytes(size_t n) {
    if (!ok || at + n > in.size()) {
      ok = false;
      return {};
    }
    std::string_view v = in.substr(at, n);
    at += n;
    return v;
  }
};

constexpr size_t cell_bytes = 1 + 8 + 2 + latency_buckets * 2 + 1 + 2 + 4 + 4 + 4 + 4;

} // namespace

std::vector<std::string> encode_cells(const rum_service& s, size_t per_chunk) {
  std::vector<std::string> chunks;
  std::map<std::string, uint16_t, std::less<>> jobs;
  std::string cells;
  uint32_t count = 0;
  auto finish = [&] {
    if (count == 0)
      return;
    std::string out;
    put<uint8_t>(out, 1);
    std::vector<std::string_view> names(jobs.size());
    for (const auto& [name, id] : jobs)
      names[id] = name;
    put<uint32_t>(out, static_cast<uint32_t>(names.size()));
    for (auto n : names) {
      put<uint16_t>(out, static_cast<uint16_t>(n.size()));
      out.append(n);
    }
    put<uint32_t>(out, count);
    out += cells;
    chunks.push_back(std::move(out));
    jobs.clear();
    cells.clear();
    count = 0;
  };
  s.for_each_cell([&](const cell_key& k, std::string_view job, const rum_estimate& e) {
    auto it = jobs.find(job);
    if (it == jobs.end())
      it = jobs.emplace(std::string(job), static_cast<uint16_t>(jobs.size())).first;
    const auto r = e.state();
    put<uint8_t>(cells, static_cast<uint8_t>(k.level));
    put<uint64_t>(cells, k.key);
    put<uint16_t>(cells, it->second);
    for (auto c : r.counts)
      put<uint16_t>(cells, c);
    put<uint8_t>(cells, r.shift);
    put<uint16_t>(cells, r.ttl_s);
    put<float>(cells, r.ok_w);
    put<float>(cells, r.all_w);
    put<uint32_t>(cells, r.decayed_s);
    put<uint32_t>(cells, r.last_s);
    if (++count >= per_chunk || jobs.size() >= 60'000)
      finish();
  });
  finish();
  return chunks;
}

size_t decode_cells(const std::vector<std::string>& chunks, rum_service& s) {
  size_t total = 0;
  for (const auto& chunk : chunks) {
    reader r{chunk};
    if (r.get<uint8_t>() != 1)
      continue; // a format this build does not know
    const uint32_t njobs = r.get<uint32_t>();
    if (!r.ok || njobs > 65535)
      continue;
    std::vector<std::string_view> jobs;
    for (uint32_t i = 0; i < njobs && r.ok; ++i)
      jobs.push_back(r.bytes(r.get<uint16_t>()));
    const uint32_t cells = r.get<uint32_t>();
    if (!r.ok || static_cast<uint64_t>(cells) * cell_bytes > chunk.size() - r.at)
      continue;
    for (uint32_t i = 0; i < cells && r.ok; ++i) {
      const uint8_t level = r.get<uint8_t>();
      const uint64_t key = r.get<uint64_t>();
      const uint16_t job = r.get<uint16_t>();
      rum_estimate::raw raw;
      for (auto& c : raw.counts)
        c = r.get<uint16_t>();
      raw.shift = r.get<uint8_t>();
      raw.ttl_s = r.get<uint16_t>();
      raw.ok_w = r.get<float>();
      raw.all_w = r.get<float>();
      raw.decayed_s = r.get<uint32_t>();
      raw.last_s = r.get<uint32_t>();
      if (!r.ok || level > static_cast<uint8_t>(key_level::resolver) || job >= jobs.size())
        continue;
      s.restore_cell(static_cast<key_level>(level), key, jobs[job], rum_estimate::from(raw));
      ++total;
    }
  }
  return total;
}

std::string encode_sample(const rum_sample& s) {
  char buf[160];
  char net[24] = "-", lat[24] = "-";
  if (s.has_network)
    std::snprintf(net, sizeof net, "%llx", static_cast<unsigned long long>(s.network));
  if (!std::isnan(s.latency_ms))
    std::snprintf(lat, sizeof lat, "%.3f", s.latency_ms);
  std::snprintf(buf, sizeof buf, " %s %u %u %u %u %s %d %.4f %u", net, s.country, s.continent, s.asn, s.at_s, lat,
                s.ok ? 1 : 0, s.weight, s.ttl_s);
  return "1 " + s.job + buf;
}

bool decode_sample(std::string_view line, rum_sample& out) {
  std::vector<std::string_view> f;
  size_t at = 0;
  while (at <= line.size() && f.size() < 12) {
    size_t sp = line.find(' ', at);
    if (sp == std::string_view::npos)
      sp = line.size();
    f.push_back(line.substr(at, sp - at));
    at = sp + 1;
  }
  if (f.size() != 11 || f[0] != "1" || f[1].empty() || f[1].size() > 512)
    return false;
  auto num = [](std::string_view t, auto& v, int base = 10) {
    auto r = std::from_chars(t.data(), t.data() + t.size(), v, base);
    return r.ec == std::errc() && r.ptr == t.data() + t.size();
  };
  rum_sample s;
  s.job = std::string(f[1]);
  s.has_network = f[2] != "-";
  unsigned country = 0, continent = 0, ok = 0;
  if ((s.has_network && !num(f[2], s.network, 16)) || !num(f[3], country) || !num(f[4], continent) ||
      !num(f[5], s.asn) || !num(f[6], s.at_s) || !num(f[8], ok) || !num(f[10], s.ttl_s) || country > 0xffff ||
      continent > 0xffff || ok > 1)
    return false;
  double lat = NAN, w = 0;
  if (f[7] != "-") {
    auto r = std::from_chars(f[7].data(), f[7].data() + f[7].size(), lat);
    if (r.ec != std::errc() || !(lat >= 0 && lat < 1e7))
      return false;
  }
  auto r = std::from_chars(f[9].data(), f[9].data() + f[9].size(), w);
  if (r.ec != std::errc() || !(w > 0 && w <= 1000))
    return false;
  s.country = static_cast<uint16_t>(country);
  s.continent = static_cast<uint16_t>(continent);
  s.ok = ok == 1;
  s.latency_ms = static_cast<float>(lat);
  s.weight = static_cast<float>(w);
  out = std::move(s);
  return true;
}

std::vector<std::string> encode_shared(const rum_sample& s) {
  std::vector<std::string> out;
  if (s.has_network || s.country || s.continent || s.asn)
    out.push_back(encode_sample(s));
  if (s.has_resolver) {
    char key[24];
    std::snprintf(key, sizeof key, "%llx", static_cast<unsigned long long>(s.resolver));
    out.push_back(std::string("j ") + key + " " + encode_sample(s));
  }
  return out;
}

std::string encode_note(const join_note& n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %llx %lld", static_cast<unsigned long long>(n.resolver),
                static_cast<long long>(n.at_ms));
  return "n " + n.id + buf;
}

bool decode_shared(std::string_view line, rum_sample& out_sample, join_note& out_note, bool& is_note) {
  auto word = [&](std::string_view& rest) {
    const size_t sp = rest.find(' ');
    std::string_view w = rest.substr(0, sp);
    rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
    return w;
  };
  auto hex = [](std::string_view t, uint64_t& v) {
    auto r = std::from_chars(t.data(), t.data() + t.size(), v, 16);
    return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size();
  };
  is_note = false;
  if (line.starts_with("n ")) {
    std::string_view rest = line.substr(2);
    const std::string_view id = word(rest), key = word(rest), at = word(rest);
    join_note n;
    n.id = std::string(id);
    long long at_ms = 0;
    auto r = std::from_chars(at.data(), at.data() + at.size(), at_ms);
    if (!join_notes::valid_id(id) || !hex(key, n.resolver) || r.ec != std::errc() ||
        r.ptr != at.data() + at.size() || !rest.empty() || at_ms <= 0)
      return false;
    n.at_ms = at_ms;
    out_note = std::move(n);
    is_note = true;
    return true;
  }
  if (line.starts_with("j ")) {
    std::string_view rest = line.substr(2);
    uint64_t resolver = 0;
    if (!hex(word(rest), resolver))
      return false;
    rum_sample s;
    if (!decode_sample(rest, s))
      return false;
    // Only the resolver level: its own levels travel in their "1" line.
    s.has_network = false;
    s.country = s.continent = 0;
    s.asn = 0;
    s.resolver = resolver;
    s.has_resolver = true;
    out_sample = std::move(s);
    return true;
  }
  return decode_sample(line, out_sample);
}

} // namespace gtmesh::rum
