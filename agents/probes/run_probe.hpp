#pragma once

#include "agents/probes/http/http_client.hpp"
#include "agents/probes/probe_result.hpp"
#include "agents/probes/probe_spec.hpp"

#include <functional>
#include <vector>

namespace gtmesh::agents {

class io_runtime;

/// Body bytes an HTTP(S) probe reads for `match.body`; the match string is
/// at most 4090 characters, so this leaves ample room.
inline constexpr size_t probe_max_body = 64 * 1024;

/// Judges a finished HTTP exchange against the spec's match rules: a
/// complete response whose status is in `match_status` and whose body (the
/// first probe_max_body bytes) contains `match_body` is a success. Pure.
probe_result judge_http_reply(const http_reply& reply, const probe_spec& spec);

/// Runs one probe (http, https or tcp) without blocking; `done` runs once on
/// the I/O thread.
void async_probe(io_runtime& io, const probe_spec& spec, std::function<void(probe_result)> done);

/// Runs many probes at once, at most `max_in_flight` concurrently, and calls
/// `done` once with the results in the order of `specs`. Call from the I/O
/// thread (or before run_until_idle).
void async_probe_all(io_runtime& io, std::vector<probe_spec> specs, size_t max_in_flight,
                     std::function<void(std::vector<probe_result>)> done);

} // namespace gtmesh::agents
