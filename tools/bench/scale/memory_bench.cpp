// memory_bench FILE [STORE_DIR]: where a config's bytes go (issue 42), in one
// process with a counting operator new/delete, so that each figure is the
// heap a structure holds (not RSS, which the allocator's slack and the
// binary's pages blur). Stages, each as bytes and bytes per record:
//
//   text             the config text as read (a decider keeps one per active
//                    version: active_config::yaml)
//   yaml table       the YAML node table of the whole text (freed after load)
//   model            the validated config model (config), text freed
//   plan             the compiled routing plan, with its main arrays listed
//   snapshot         make_snapshot over an empty view (every record prepared)
//   api json         the config as JSON, as the decider makes it for the
//                    config API (config_api::document, kept per version)
//   store            a RocksDB store holding the config (what opening it and
//                    reading the config back hold), when STORE_DIR is given
//   load peak        the most live heap while loading (text + table + model)
//
// The scale bench (scale_bench.sh) prints it beside its load figures.
//
//   build/tools/bench/memory_bench /tmp/s100k/gtmesh.yaml [/tmp/store]
//   ONE_THREAD=1 build/tools/bench/memory_bench ...   # every stage on one thread

#include "core/config/config_loader.hpp"
#include "core/config/loader/loader.hpp"
#include "core/config/yaml_fast_reader.hpp"
#include "core/config/yaml_tree.hpp"
#include "core/decider/config_api.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/measurement_view.hpp"
#include "core/routing/routing_plan.hpp"
#include "core/routing/routing_snapshot.hpp"
#include "core/routing/state_file.hpp"
#include "core/state/store.hpp"

#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <unordered_set>

namespace {

std::atomic<int64_t> live{0};
std::atomic<int64_t> peak{0};

void count(int64_t n) {
  const int64_t now = live.fetch_add(n, std::memory_order_relaxed) + n;
  int64_t p = peak.load(std::memory_order_relaxed);
  while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
  }
}

void* counted_alloc(size_t n, size_t align) {
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                              : std::malloc(n ? n : 1);
  if (!p)
    throw std::bad_alloc();
  count(static_cast<int64_t>(malloc_usable_size(p)));
  return p;
}

void counted_free(void* p) noexcept {
  if (!p)
    return;
  count(-static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}

} // namespace

void* operator new(size_t n) { return counted_alloc(n, 0); }
void* operator new[](size_t n) { return counted_alloc(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<size_t>(a)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { counted_free(p); }

namespace {

size_t records = 1;

void row(const char* what, int64_t bytes, const char* note = "") {
  std::printf("  %-28s %9.1f MB %7.0f B/record  %s\n", what, static_cast<double>(bytes) / 1048576,
              static_cast<double>(bytes) / static_cast<double>(records), note);
}

template <class V> int64_t vec_bytes(const V& v) {
  return static_cast<int64_t>(v.capacity() * sizeof(typename V::value_type));
}

int64_t string_heap(const std::string& s) {
  return s.capacity() > 15 ? static_cast<int64_t>(s.capacity() + 1) : 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: memory_bench FILE [STORE_DIR]\n");
    return 2;
  }
  if (const char* one = std::getenv("ONE_THREAD"); one && *one == '1') {
    // The same stages on one thread: what the second threads' copies cost.
    gtmesh::yaml::split_min_bytes = SIZE_MAX;
    gtmesh::config_loading::parallel_records_min = SIZE_MAX;
    gtmesh::parallel_names_min = SIZE_MAX;
  }
  const int64_t base = live.load();
  std::string text;
  {
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    text.shrink_to_fit();
  }
  const int64_t text_bytes = live.load() - base;

  int64_t table_bytes = 0;
  size_t table_nodes = 0;
  {
    const int64_t before = live.load();
    auto parsed = gtmesh::yaml::parse(text);
    table_bytes = live.load() - before;
    table_nodes = parsed.doc ? parsed.doc->node_count() : 0;
  }

  peak.store(live.load());
  const int64_t before_load = live.load();
  auto loaded = gtmesh::load_config_text(text, argv[1], gtmesh::routing_methods());
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s", loaded.report().c_str());
    return 1;
  }
  const int64_t load_peak = peak.load() - base;
  const int64_t model_bytes = live.load() - before_load;
  int64_t value_bytes = 0;
  { // a copy of the pool holds what it holds (shrunk to fit when loaded), as counted by operator new
    const int64_t before = live.load();
    const gtmesh::answer_value_pool copy = loaded.cfg->answer_values;
    value_bytes = live.load() - before;
  }
  const gtmesh::config& cfg = *loaded.cfg;
  records = 0;
  int64_t record_structs = 0, names = 0, policies = 0;
  std::unordered_set<const gtmesh::dc_ranking*> rankings;
  for (const auto& z : cfg.zones) {
    records += z.records.size();
    record_structs += vec_bytes(z.records);
    for (const auto& r : z.records) {
      names += string_heap(r.name) + string_heap(r.profile);
      if (r.dc) {
        policies += static_cast<int64_t>(sizeof(gtmesh::dc_policy)) + vec_bytes(r.dc->answers);
        if (rankings.insert(r.dc->ranking.get()).second) // shared: counted once
          policies += static_cast<int64_t>(sizeof(gtmesh::dc_ranking)) + vec_bytes(r.dc->ranking->gates) +
                      string_heap(r.dc->ranking->select.service);
      }
    }
  }
  if (records == 0)
    records = 1;

  const int64_t before_plan = live.load();
  auto compiled = gtmesh::compile_plan(loaded.cfg, 1);
  if (!compiled.plan) {
    std::fprintf(stderr, "compile: %s\n", compiled.error.c_str());
    return 1;
  }
  const int64_t plan_bytes = live.load() - before_plan;
  const gtmesh::routing_plan& plan = *compiled.plan;
  int64_t dc_plan_bytes = vec_bytes(plan.dc_plans) + vec_bytes(plan.dc_candidates) + vec_bytes(plan.dc_rankings);
  for (const auto& k : plan.dc_rankings)
    dc_plan_bytes += vec_bytes(k.dcs) + vec_bytes(k.recovery_cells) + vec_bytes(k.gates) + vec_bytes(k.rum_targets);
  int64_t rdata_text = vec_bytes(plan.rdata_text) + vec_bytes(plan.rdata_text_index);
  for (const auto& s : plan.rdata_text)
    rdata_text += string_heap(s);
  const int64_t answers = vec_bytes(plan.answers) + vec_bytes(plan.answer_locations) + vec_bytes(plan.wrr_schedule);
  const int64_t rdata = vec_bytes(plan.rdata) + vec_bytes(plan.rdata_bytes);
  const int64_t record_plans = vec_bytes(plan.records);
  const int64_t profiles = vec_bytes(plan.profile_plans) + vec_bytes(plan.profile_deps) +
                           vec_bytes(plan.profile_deps_first) + vec_bytes(plan.dc_rankings_of) +
                           vec_bytes(plan.dc_rankings_first);

  const int64_t before_snapshot = live.load();
  auto snapshot = gtmesh::make_snapshot(compiled.plan, gtmesh::empty_view(plan), 1'000'000, 1);
  const int64_t snapshot_bytes = live.load() - before_snapshot;

  int64_t json_bytes = 0;
  double json_seconds = 0;
  {
    const int64_t before = live.load();
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    auto doc = gtmesh::decider::config_api::document(text, error);
    json_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    json_bytes = doc ? live.load() - before : -1;
  }

  int64_t store_bytes = -1;
  if (argc == 3) {
    std::filesystem::remove_all(argv[2]);
    const int64_t before = live.load();
    std::string error;
    auto db = gtmesh::state::store::open(argv[2], error);
    if (db) {
      gtmesh::state::write_set w;
      w.config = gtmesh::state::stored_config{1, text, argv[1], 0, nullptr};
      if (db->commit(w, 10, error)) {
        w = {};
        db.reset();
        const int64_t after_write = live.load();
        (void)after_write;
        db = gtmesh::state::store::open(argv[2], error);
        auto c = db ? db->latest_config() : std::nullopt;
        store_bytes = live.load() - before - (c ? static_cast<int64_t>(c->yaml.capacity()) : 0);
      }
    }
    if (store_bytes < 0)
      std::fprintf(stderr, "store: %s\n", error.c_str());
  }

  std::printf("where the bytes go (%zu records; heap as counted by operator new):\n", records);
  row("config text", text_bytes, "(a decider keeps one per active version)");
  // The reader reserves for a node per 4 bytes of text: what it does not
  // fill is never touched, so it counts here but not in the RSS.
  char table_note[96];
  std::snprintf(table_note, sizeof table_note, "(freed after loading; %.2f M nodes, 12 B + items each, the rest reserved)",
                static_cast<double>(table_nodes) / 1e6);
  row("YAML node table", table_bytes, table_note);
  row("model (config)", model_bytes);
  row("  record structs", record_structs);
  row("  DC-mode policies", policies);
  row("  names (heap)", names);
  row("  answer values", value_bytes);
  row("  answers", vec_bytes(cfg.answers));
  row("plan (routing_plan)", plan_bytes);
  row("  record plans", record_plans);
  row("  DC-mode plans", dc_plan_bytes);
  row("  answers", answers);
  row("  rdata", rdata);
  row("  rdata texts", rdata_text);
  row("  profiles and indexes", profiles);
  row("  name table and the rest", plan_bytes - record_plans - dc_plan_bytes - answers - rdata - rdata_text - profiles);
  row("snapshot", snapshot_bytes);
  char made[64];
  std::snprintf(made, sizeof made, "(made from the text in %.2f s)", json_seconds);
  row("API JSON (per version)", json_bytes, made);
  if (store_bytes >= 0)
    row("RocksDB store, opened", store_bytes);
  row("load peak (text+table+model)", load_peak);
  row("serving (text, model, plan, snapshot)", text_bytes + model_bytes + plan_bytes + snapshot_bytes);
  return 0;
}
