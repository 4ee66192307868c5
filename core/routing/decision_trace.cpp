#include "core/routing/decision_trace.hpp"

#include "core/text/json_quote.hpp"

#include <cstdio>

namespace gtmesh {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

} // namespace

std::string format_age(int64_t age_ms) {
  if (age_ms < 0)
    return "never";
  if (age_ms < 1000)
    return std::to_string(age_ms) + "ms";
  int64_t s = age_ms / 1000;
  if (s < 120)
    return std::to_string(s) + "s";
  if (s < 7200)
    return std::to_string(s / 60) + "m" + (s % 60 ? std::to_string(s % 60) + "s" : "");
  return std::to_string(s / 3600) + "h" + (s % 3600 / 60 ? std::to_string(s % 3600 / 60) + "m" : "");
}

trace_candidate* decision_trace::find(const std::string& name) {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->candidate && it->candidate->name == name)
      return &*it->candidate;
  return nullptr;
}

trace_candidate* decision_trace::find(size_t first, int depth, const std::string& name) {
  for (size_t i = first; i < entries_.size(); ++i)
    if (entries_[i].candidate && entries_[i].depth == depth && entries_[i].candidate->name == name)
      return &*entries_[i].candidate;
  return nullptr;
}

std::vector<const trace_candidate*> decision_trace::candidates() const {
  std::vector<const trace_candidate*> out;
  for (const auto& e : entries_)
    if (e.candidate)
      out.push_back(&*e.candidate);
  return out;
}

std::string decision_trace::to_text() const {
  std::string out = question + "\n";
  out += "  (* picked, o eligible but not chosen, - excluded)\n";
  for (const auto& e : entries_) {
    std::string indent(2 + 2 * static_cast<size_t>(e.depth), ' ');
    if (!e.candidate) {
      out += indent + e.note + "\n";
      continue;
    }
    const trace_candidate& c = *e.candidate;
    char head[96];
    std::snprintf(head, sizeof(head), "%s %-10s", c.picked ? "*" : c.eligible ? "o" : "-", c.name.c_str());
    out += indent + head;
    if (!c.metric.empty()) {
      out += " " + c.metric + "=" + (c.value ? number(*c.value) : std::string("none"));
      if (c.age_ms >= 0)
        out += " (age " + format_age(c.age_ms) + (c.stale ? ", STALE" : "") + ")";
    }
    if (!c.gate.empty())
      out += " gate " + c.gate;
    if (c.rank > 0)
      out += " rank " + std::to_string(c.rank);
    out += std::string(" => ") + (c.picked ? "PICKED" : c.eligible ? "not chosen" : "excluded");
    if (!c.reason.empty())
      out += ": " + c.reason;
    if (!c.answers.empty()) {
      out += " ->";
      for (const auto& a : c.answers)
        out += " " + a;
    }
    out += "\n";
  }
  out += "outcome: " + outcome + "\n";
  if (!failover_budget.empty())
    out += "failover budget: " + failover_budget + "\n";
  return out;
}

std::string decision_trace::to_json() const {
  std::string out = "{\"question\":" + json_string(question) + ",\"steps\":[";
  bool first = true;
  for (const auto& e : entries_) {
    out += first ? "" : ",";
    first = false;
    out += "{\"depth\":" + std::to_string(e.depth);
    if (!e.candidate) {
      out += ",\"note\":" + json_string(e.note) + "}";
      continue;
    }
    const trace_candidate& c = *e.candidate;
    out += ",\"candidate\":" + json_string(c.name) + ",\"kind\":" + json_string(c.kind);
    if (!c.metric.empty())
      out += ",\"metric\":" + json_string(c.metric);
    if (c.value)
      out += ",\"value\":" + number(*c.value);
    out += ",\"age_ms\":" + std::to_string(c.age_ms) + ",\"stale\":" + (c.stale ? "true" : "false");
    if (c.age_ms >= 0)
      out += ",\"at_ms\":" + std::to_string(c.at_ms);
    if (!c.gate.empty())
      out += ",\"gate\":" + json_string(c.gate);
    out += ",\"rank\":" + std::to_string(c.rank) + ",\"eligible\":" + (c.eligible ? "true" : "false") +
           ",\"picked\":" + (c.picked ? "true" : "false");
    out += ",\"reason\":" + json_string(c.reason) + ",\"answers\":[";
    for (size_t i = 0; i < c.answers.size(); ++i)
      out += (i ? "," : "") + json_string(c.answers[i]);
    out += "]}";
  }
  out += "],\"outcome\":" + json_string(outcome);
  if (!failover_budget.empty())
    out += ",\"failover_budget\":" + json_string(failover_budget);
  out += "}";
  return out;
}

} // namespace gtmesh
