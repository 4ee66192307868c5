#pragma once

#include "core/metrics/measurement.hpp"

#include <cstdio>
#include <mutex>
#include <string>

namespace gtmesh::agents {

/// One measurement as one JSON object on one line (no trailing newline):
/// {"dc":"fra","source":"service","key":"web/10.0.1.1:80","metric":"status",
///  "value":1,"unit":"1 up, 0 down","at_ms":1764417600000,"origin":"fra/a1","seq":42}
/// Integral values print without a fraction; others with up to 6 decimals.
std::string to_json_line(const measurement& m);

/// The sink of `gtmesh agent --print`: writes every measurement as a JSON
/// line to a stdio stream and flushes after each batch. Thread-safe.
class json_lines_sink final : public measurement_sink {
public:
  explicit json_lines_sink(std::FILE* out) : out_(out) {}
  void deliver(std::span<const measurement> batch) override;

private:
  std::mutex mutex_;
  std::FILE* out_;
};

} // namespace gtmesh::agents
