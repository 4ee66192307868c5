// yaml_parse_bench LIB FILE: the YAML layer alone, on a generated config
// (tools/bench/scale/gen_config.py), one library per process so that peak
// RSS is that library's (issue 11: "measure yaml-cpp against libfyaml and a
// streaming libyaml reader, and pick by numbers").
//
//   yaml-cpp   YAML::LoadFile: the node tree the config loader walks today
//   libfyaml   fy_document_build_from_file: a document tree with line/column
//              marks on every node (YAML 1.2)
//   libyaml    yaml_parser_parse until the stream ends: events only, no tree
//              (the floor of a streaming reader; marks come with each event)
//   gtmesh     yaml::parse (core/config/yaml_tree.hpp): the flat node table
//              the config loader walks, by the fast reader when it can
//   gtmesh-libyaml  yaml::parse_with_libyaml: the same table from libyaml's
//              events (what a config outside the fast reader's subset costs)
//
// Prints "LIB seconds nodes peak_rss_kb"; `nodes` counts scalars seen, so the
// three can be checked to have read the same document.

#include "core/config/yaml_tree.hpp"

#include <yaml-cpp/yaml.h>
#include <libfyaml.h>
#include <yaml.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

namespace {

long peak_rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stol(line.substr(6));
  return 0;
}

size_t count_yaml_cpp(const YAML::Node& n) {
  if (n.IsScalar())
    return 1;
  size_t c = 0;
  if (n.IsMap())
    for (const auto& kv : n)
      c += count_yaml_cpp(kv.first) + count_yaml_cpp(kv.second);
  else if (n.IsSequence())
    for (const auto& v : n)
      c += count_yaml_cpp(v);
  return c;
}

size_t count_fy(fy_node* n) {
  if (!n)
    return 0;
  switch (fy_node_get_type(n)) {
  case FYNT_SCALAR:
    return 1;
  case FYNT_SEQUENCE: {
    size_t c = 0;
    void* it = nullptr;
    while (fy_node* v = fy_node_sequence_iterate(n, &it))
      c += count_fy(v);
    return c;
  }
  case FYNT_MAPPING: {
    size_t c = 0;
    void* it = nullptr;
    while (fy_node_pair* p = fy_node_mapping_iterate(n, &it))
      c += count_fy(fy_node_pair_key(p)) + count_fy(fy_node_pair_value(p));
    return c;
  }
  }
  return 0;
}

size_t parse_libyaml(const char* file) {
  FILE* f = std::fopen(file, "rb");
  if (!f)
    return 0;
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_file(&parser, f);
  size_t scalars = 0;
  for (;;) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      std::fprintf(stderr, "libyaml: %s at line %zu\n", parser.problem, parser.problem_mark.line + 1);
      break;
    }
    bool end = event.type == YAML_STREAM_END_EVENT;
    scalars += event.type == YAML_SCALAR_EVENT;
    yaml_event_delete(&event);
    if (end)
      break;
  }
  yaml_parser_delete(&parser);
  std::fclose(f);
  return scalars;
}

size_t count_tree(const gtmesh::yaml::node& n) {
  if (n.is_scalar() || n.is_null())
    return 1;
  size_t c = 0;
  if (n.is_map())
    for (size_t i = 0; i < n.size(); ++i)
      c += count_tree(n.key_at(i)) + count_tree(n.value_at(i));
  else if (n.is_sequence())
    for (size_t i = 0; i < n.size(); ++i)
      c += count_tree(n[i]);
  return c;
}

std::string read_file(const char* file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: yaml_parse_bench yaml-cpp|libfyaml|libyaml|gtmesh|gtmesh-libyaml FILE\n");
    return 2;
  }
  const std::string lib = argv[1];
  const char* file = argv[2];
  auto t0 = std::chrono::steady_clock::now();
  size_t nodes = 0;
  if (lib == "yaml-cpp") {
    YAML::Node doc = YAML::LoadFile(file);
    nodes = count_yaml_cpp(doc);
  } else if (lib == "libfyaml") {
    fy_document* doc = fy_document_build_from_file(nullptr, file);
    if (!doc)
      return 1;
    nodes = count_fy(fy_document_root(doc));
    fy_document_destroy(doc);
  } else if (lib == "libyaml") {
    nodes = parse_libyaml(file);
  } else if (lib == "gtmesh" || lib == "gtmesh-libyaml") {
    std::string text = read_file(file);
    auto r = lib == "gtmesh" ? gtmesh::yaml::parse(text) : gtmesh::yaml::parse_with_libyaml(text);
    if (!r.doc) {
      std::fprintf(stderr, "%s: %s at line %d\n", lib.c_str(), r.message.c_str(), r.where.line + 1);
      return 1;
    }
    if (lib == "gtmesh" && r.used_libyaml)
      std::fprintf(stderr, "gtmesh: the fast reader handed this text to libyaml\n");
    nodes = count_tree(r.doc->root());
  } else {
    return 2;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s %.3f %zu %ld\n", lib.c_str(), s, nodes, peak_rss_kb());
  return 0;
}
