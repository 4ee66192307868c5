#include "core/mesh/fault_hooks.hpp"

#include "core/config/duration.hpp"

#include <sstream>

namespace gtmesh::mesh {

void fault_injector::set(const std::string& peer, const link_faults& f) {
  std::lock_guard lock(mutex_);
  if (f.any())
    links_[peer] = f;
  else
    links_.erase(peer);
}

void fault_injector::clear() {
  std::lock_guard lock(mutex_);
  links_.clear();
}

bool fault_injector::parse(const std::string& text, link_faults& out) {
  out = link_faults{};
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty() || part == "none")
      continue;
    if (part == "partition") {
      out.partitioned = true;
      continue;
    }
    auto eq = part.find('=');
    if (eq == std::string::npos)
      return false;
    std::string key = part.substr(0, eq), value = part.substr(eq + 1);
    try {
      if (key == "drop")
        out.drop = std::stod(value);
      else if (key == "dup")
        out.duplicate = std::stod(value);
      else if (key == "reorder")
        out.reorder = std::stod(value);
      else if (key == "delay" || key == "reorder_window") {
        auto ms = parse_duration_ms(value);
        if (!ms)
          return false;
        (key == "delay" ? out.delay_ms : out.reorder_ms) = *ms;
      } else {
        return false;
      }
    } catch (...) {
      return false;
    }
  }
  auto prob = [](double p) { return p >= 0 && p <= 1; };
  return prob(out.drop) && prob(out.duplicate) && prob(out.reorder);
}

std::vector<int64_t> fault_injector::plan(const std::string& peer) {
  std::lock_guard lock(mutex_);
  ++counters_.sent;
  auto it = links_.find(peer);
  if (it == links_.end())
    it = links_.find("*");
  if (it == links_.end())
    return {0};
  const link_faults& f = it->second;
  std::uniform_real_distribution<double> u(0, 1);
  if (f.partitioned || u(random_) < f.drop) {
    ++counters_.dropped;
    return {};
  }
  int64_t delay = f.delay_ms;
  if (delay > 0)
    ++counters_.delayed;
  if (u(random_) < f.reorder) {
    delay += f.reorder_ms;
    ++counters_.reordered;
  }
  std::vector<int64_t> copies{delay};
  if (u(random_) < f.duplicate) {
    copies.push_back(delay + 1);
    ++counters_.duplicated;
  }
  return copies;
}

fault_injector::counters fault_injector::stats() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

std::string fault_injector::describe() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  for (const auto& [peer, f] : links_) {
    out << peer << ":";
    if (f.partitioned)
      out << " partition";
    if (f.drop > 0)
      out << " drop=" << f.drop;
    if (f.duplicate > 0)
      out << " dup=" << f.duplicate;
    if (f.reorder > 0)
      out << " reorder=" << f.reorder;
    if (f.delay_ms > 0)
      out << " delay=" << f.delay_ms << "ms";
    out << "\n";
  }
  return out.str();
}

} // namespace gtmesh::mesh
