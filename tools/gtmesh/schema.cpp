// gtmesh schema: the config's JSON Schema (draft 2020-12), made from the
// table of fields the loader checks keys against (core/config/config_fields)
// and the registered routing methods. Editors validate with it, e.g. with
// yaml-language-server:  # yaml-language-server: $schema=gtmesh-config.schema.json

#include "core/config/config_fields.hpp"
#include "core/routing/all_methods.hpp"
#include "tools/gtmesh/command_table.hpp"
#include "tools/gtmesh/commands.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

namespace gtmesh::cli {

namespace {

using json = nlohmann::ordered_json;
using config_fields::shape;

json scalar() { return json{{"type", json::array({"string", "number", "boolean"})}}; }
json texts() { return json{{"anyOf", json::array({scalar(), json{{"type", "array"}, {"items", scalar()}}})}}; }

json field_schema(const config_fields::field& f, const std::vector<std::string>& methods) {
  json s;
  switch (f.kind) {
    case shape::text:
      s = scalar();
      if (!f.values.empty()) {
        s = json{{"enum", json::array()}};
        for (auto v : f.values)
          s["enum"].push_back(std::string(v));
      } else if (f.key == "method") {
        s = json{{"enum", methods}};
      }
      break;
    case shape::integer:
      s = json{{"type", "integer"}};
      break;
    case shape::number:
      s = json{{"type", "number"}};
      break;
    case shape::boolean:
      s = json{{"anyOf", json::array({json{{"type", "boolean"}}, json{{"enum", {"yes", "no", "on", "off"}}}})}};
      break;
    case shape::duration:
      s = json{{"anyOf", json::array({json{{"type", "integer"}, {"minimum", 0}},
                                      json{{"type", "string"}, {"pattern", "^[0-9]+(ms|s|m|h|d)?$"}}})}};
      break;
    case shape::texts:
      s = texts();
      break;
    case shape::object:
      s = json{{"$ref", "#/$defs/" + std::string(f.of)}};
      break;
    case shape::list: {
      json item{{"$ref", "#/$defs/" + std::string(f.of)}};
      if (config_fields::get(f.of).or_shape == "text") // an element may be a scalar too (`allow: [127.0.0.1]`)
        item = json{{"anyOf", json::array({scalar(), item})}};
      s = json{{"type", "array"}, {"items", item}};
      break;
    }
    case shape::map_of_texts:
      s = json{{"type", "object"}, {"additionalProperties", texts()}};
      break;
    case shape::map_of_text:
      s = json{{"type", "object"}, {"additionalProperties", scalar()}};
      break;
    case shape::any:
      s = json::object();
      break;
  }
  s["description"] = std::string(f.doc);
  return s;
}

json object_schema(const config_fields::object_fields& o, const std::vector<std::string>& methods) {
  json s{{"type", "object"}, {"description", std::string(o.doc)}, {"additionalProperties", false}};
  json props = json::object(), required = json::array();
  for (const auto& f : o.fields) {
    props[std::string(f.key)] = field_schema(f, methods);
    if (f.required)
      required.push_back(std::string(f.key));
  }
  s["properties"] = props;
  if (!required.empty())
    s["required"] = required;
  return s;
}

} // namespace

std::string config_schema() {
  std::vector<std::string> methods;
  std::stringstream names(routing_methods().names());
  for (std::string n; std::getline(names, n, ',');) {
    while (!n.empty() && n.front() == ' ')
      n.erase(0, 1);
    if (!n.empty())
      methods.push_back(n);
  }
  json root = object_schema(config_fields::get("config"), methods);
  json schema{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
              {"title", "gtmesh config"}};
  for (const auto& [k, v] : root.items())
    schema[k] = v;
  json defs = json::object();
  for (const auto& o : config_fields::objects())
    if (o.name != "config")
      defs[std::string(o.name)] = object_schema(o, methods);
  schema["$defs"] = defs;
  return schema.dump(2) + "\n";
}

int schema(const args& a) {
  if (!a.empty())
    return usage_error("schema", "takes no arguments");
  std::fputs(config_schema().c_str(), stdout);
  return 0;
}

} // namespace gtmesh::cli
