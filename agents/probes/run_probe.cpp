#include "agents/probes/run_probe.hpp"

#include "agents/probes/tcp/tcp_probe.hpp"

#include <memory>

namespace gtmesh::agents {

probe_result judge_http_reply(const http_reply& reply, const probe_spec& spec) {
  probe_result r;
  r.latency_ms = reply.elapsed_ms;
  r.status_code = reply.status;
  if (!reply.ok) {
    r.detail = reply.error;
    return r;
  }
  if (!status_matches(reply.status, spec.match_status)) {
    r.detail = "status " + std::to_string(reply.status) + " not matched";
    return r;
  }
  if (!spec.match_body.empty() && reply.body.find(spec.match_body) == std::string::npos) {
    r.detail = "status " + std::to_string(reply.status) + ", body does not contain the match string";
    return r;
  }
  r.success = true;
  r.detail = "status " + std::to_string(reply.status);
  return r;
}

void async_probe(io_runtime& io, const probe_spec& spec, std::function<void(probe_result)> done) {
  if (spec.protocol == probe_protocol::tcp) {
    async_tcp_probe(io, spec.address, spec.port, spec.timeout_ms, std::move(done));
    return;
  }
  http_target t;
  t.tls = spec.protocol == probe_protocol::https;
  t.address = spec.address;
  t.port = spec.port;
  t.host_header = spec.host_header;
  t.sni = spec.sni;
  t.path = spec.path;
  t.headers = spec.headers;
  async_http_get(io, t, spec.timeout_ms, probe_max_body, [spec, done = std::move(done)](http_reply reply) {
    done(judge_http_reply(reply, spec));
  });
}

namespace {

struct probe_batch : std::enable_shared_from_this<probe_batch> {
  io_runtime* io = nullptr;
  std::vector<probe_spec> specs;
  std::vector<probe_result> results;
  size_t next = 0;
  size_t finished = 0;
  std::function<void(std::vector<probe_result>)> done;

  void launch_next() {
    if (next >= specs.size())
      return;
    size_t index = next++;
    auto self = shared_from_this();
    async_probe(*io, specs[index], [self, index](probe_result r) {
      self->results[index] = std::move(r);
      if (++self->finished == self->specs.size()) {
        auto cb = std::move(self->done);
        cb(std::move(self->results));
        return;
      }
      self->launch_next();
    });
  }
};

} // namespace

void async_probe_all(io_runtime& io, std::vector<probe_spec> specs, size_t max_in_flight,
                     std::function<void(std::vector<probe_result>)> done) {
  if (specs.empty()) {
    done({});
    return;
  }
  auto batch = std::make_shared<probe_batch>();
  batch->io = &io;
  batch->results.resize(specs.size());
  batch->specs = std::move(specs);
  batch->done = std::move(done);
  size_t initial = std::min(std::max<size_t>(1, max_in_flight), batch->specs.size());
  for (size_t i = 0; i < initial; ++i)
    batch->launch_next();
}

} // namespace gtmesh::agents
