#include "core/config/config_objects.hpp"

#include "core/text/ascii_case.hpp"

#include <algorithm>

namespace gtmesh::config_objects {

using config_json::text_of;

namespace {

std::string trim_dot(std::string_view s) {
  while (!s.empty() && s.back() == '.')
    s.remove_suffix(1);
  return ascii_lower(s);
}

/// The top-level key a kind lives under.
const char* section_of(const std::string& kind) { return kind == "records" ? "zones" : kind.c_str(); }

bool same_zone(const json& zone, const std::string& name) {
  return zone.is_object() && zone.contains("name") && trim_dot(text_of(zone["name"])) == trim_dot(name);
}

bool is_object(const json& item, const object_ref& ref, const std::string& zone) {
  if (!item.is_object() || !item.contains("name"))
    return false;
  if (ref.kind == "zones")
    return trim_dot(text_of(item["name"])) == trim_dot(ref.name);
  if (ref.kind == "records")
    return item.contains("type") && ascii_upper(text_of(item["type"])) == ref.type &&
           relative_record_name(text_of(item["name"]), zone) == ref.name;
  return text_of(item["name"]) == ref.name;
}

/// The list holding ref's objects (created empty when `create`); null when
/// the zone of a record is not there.
json* list_of(json& config, const object_ref& ref, bool create, size_t* zone_index = nullptr) {
  if (!config.is_object())
    return nullptr;
  const char* section = section_of(ref.kind);
  if (!config.contains(section) || !config[section].is_array()) {
    if (!create || ref.kind == "records")
      return nullptr;
    config[section] = json::array();
  }
  json& list = config[section];
  if (ref.kind != "records")
    return &list;
  for (size_t i = 0; i < list.size(); ++i)
    if (same_zone(list[i], ref.zone)) {
      if (zone_index)
        *zone_index = i;
      json& zone = list[i];
      if (!zone.contains("records") || !zone["records"].is_array()) {
        if (!create)
          return nullptr;
        zone["records"] = json::array();
      }
      return &zone["records"];
    }
  return nullptr;
}

std::optional<size_t> find(const json& list, const object_ref& ref) {
  for (size_t i = 0; i < list.size(); ++i)
    if (is_object(list[i], ref, ref.zone))
      return i;
  return std::nullopt;
}

bool valid_segment(std::string_view s) {
  return !s.empty() && s.size() <= 255 && s.find(' ') == std::string_view::npos && config_json::printable_utf8(s);
}

} // namespace

const std::vector<std::string>& kinds() {
  static const std::vector<std::string> all{"datacenters", "probes", "services", "zones", "profiles"};
  return all;
}

std::string relative_record_name(std::string_view name, std::string_view zone) {
  std::string n = ascii_lower(name);
  if (n.empty() || n == "@")
    return "@";
  if (n.back() != '.')
    return n;
  std::string z = trim_dot(zone);
  n.pop_back();
  if (n == z)
    return "@";
  if (n.size() > z.size() && n.ends_with("." + z))
    return n.substr(0, n.size() - z.size() - 1);
  return n + "."; // outside the zone: the loader says so
}

std::string object_ref::path() const {
  if (kind == "records")
    return "zones/" + zone + "/records" + (name.empty() ? "" : "/" + name + "/" + type);
  return kind + (name.empty() ? "" : "/" + name);
}

std::optional<object_ref> parse_path(std::string_view path, std::string& error) {
  std::vector<std::string> parts;
  while (!path.empty() && path.front() == '/')
    path.remove_prefix(1);
  while (!path.empty() && path.back() == '/')
    path.remove_suffix(1);
  for (size_t at = 0; at <= path.size() && !path.empty();) {
    size_t end = path.find('/', at);
    if (end == std::string_view::npos)
      end = path.size();
    parts.emplace_back(path.substr(at, end - at));
    at = end + 1;
  }
  for (const auto& p : parts)
    if (!valid_segment(p)) {
      error = "'" + std::string(path) + "': an empty or malformed path segment";
      return std::nullopt;
    }
  object_ref ref;
  if (parts.empty() || std::find(kinds().begin(), kinds().end(), parts[0]) == kinds().end()) {
    error = "'" + std::string(path) + "' names no kind of object: expected zones, zones/ZONE/records, profiles, "
            "services, datacenters or probes";
    return std::nullopt;
  }
  ref.kind = parts[0];
  if (ref.kind == "zones" && parts.size() >= 3) {
    if (parts[2] != "records" || (parts.size() != 3 && parts.size() != 5)) {
      error = "'" + std::string(path) + "': a record is zones/ZONE/records/NAME/TYPE";
      return std::nullopt;
    }
    ref.kind = "records";
    ref.zone = parts[1];
    if (parts.size() == 5) {
      ref.name = relative_record_name(parts[3], parts[1]);
      ref.type = ascii_upper(parts[4]);
    }
    return ref;
  }
  if (parts.size() > 2) {
    error = "'" + std::string(path) + "': " + ref.kind + "/NAME names one object; there is nothing below it";
    return std::nullopt;
  }
  if (parts.size() == 2)
    ref.name = parts[1];
  return ref;
}

std::optional<json> get(const json& config, const object_ref& ref, std::string& error) {
  json& doc = const_cast<json&>(config); // list_of(create=false) changes nothing
  json* list = list_of(doc, ref, false);
  if (!list) {
    if (ref.kind == "records") {
      bool zone_there = false;
      if (config.contains("zones") && config["zones"].is_array())
        for (const auto& z : config["zones"])
          zone_there = zone_there || same_zone(z, ref.zone);
      if (!zone_there) {
        error = "no zone '" + ref.zone + "'";
        return std::nullopt;
      }
    }
    if (ref.is_collection())
      return json::array();
    error = "no " + ref.path();
    return std::nullopt;
  }
  if (ref.is_collection()) {
    if (ref.kind != "zones")
      return *list;
    // The zones without their records (each has its own URL), with a count.
    json out = json::array();
    for (const auto& z : *list) {
      json copy = z;
      if (copy.is_object() && copy.contains("records")) {
        copy["record_count"] = copy["records"].is_array() ? copy["records"].size() : 0;
        copy.erase("records");
      }
      out.push_back(std::move(copy));
    }
    return out;
  }
  auto at = find(*list, ref);
  if (!at) {
    error = "no " + ref.path();
    return std::nullopt;
  }
  return (*list)[*at];
}

std::optional<record_place> find_record(const json& config, const object_ref& ref) {
  if (ref.kind != "records" || ref.is_collection())
    return std::nullopt;
  size_t zone = 0;
  json* list = list_of(const_cast<json&>(config), ref, false, &zone); // create=false changes nothing
  if (!list)
    return std::nullopt;
  return record_place{zone, find(*list, ref)};
}

edit_result apply(json& config, const edit& e) {
  edit_result r;
  const object_ref& ref = e.ref;
  if (ref.is_collection()) {
    r.status = 405;
    r.error = ref.path() + " is a collection: PUT and DELETE take one object (" + ref.path() + "/NAME)";
    return r;
  }
  if (!config.is_object())
    config = json::object();
  json body;
  if (e.body) {
    body = *e.body;
    if (!body.is_object()) {
      r.status = 400;
      r.error = "the body must be one JSON object: the " + ref.kind + " in the config's own field names";
      return r;
    }
    // The URL names the object; a name (and type) in the body must agree.
    auto agree = [&](const char* field, const std::string& want, bool same) {
      if (!body.contains(field)) {
        body[field] = want;
        return true;
      }
      if (same)
        return true;
      r.status = 400;
      r.error = std::string("/") + field + ": '" + text_of(body[field]) + "' differs from the URL's '" + want + "'";
      return false;
    };
    if (ref.kind == "records") {
      const std::string n = body.contains("name") ? text_of(body["name"]) : "";
      if (!agree("name", ref.name, relative_record_name(n, ref.zone) == ref.name) ||
          !agree("type", ref.type, body.contains("type") && ascii_upper(text_of(body["type"])) == ref.type))
        return r;
    } else if (ref.kind == "zones") {
      if (!agree("name", ref.name, body.contains("name") && trim_dot(text_of(body["name"])) == trim_dot(ref.name)))
        return r;
    } else if (!agree("name", ref.name, body.contains("name") && text_of(body["name"]) == ref.name)) {
      return r;
    }
    // `name` first, as configs write it.
    json ordered = json::object();
    ordered["name"] = body["name"];
    if (ref.kind == "records")
      ordered["type"] = body["type"];
    for (const auto& [k, v] : body.items())
      if (!ordered.contains(k))
        ordered[k] = v;
    body = std::move(ordered);
  }
  size_t zone_index = 0;
  json* list = list_of(config, ref, e.body.has_value(), &zone_index);
  if (!list) {
    r.status = 404;
    r.error = ref.kind == "records" ? "no zone '" + ref.zone + "': create it first (PUT zones/" + ref.zone + ")"
                                    : "no " + ref.path();
    return r;
  }
  const std::string base = ref.kind == "records" ? "/zones/" + std::to_string(zone_index) + "/records"
                                                 : std::string("/") + section_of(ref.kind);
  auto at = find(*list, ref);
  if (!e.body) {
    if (!at) {
      r.status = 404;
      r.error = "no " + ref.path();
      return r;
    }
    r.pointer = base + "/" + std::to_string(*at);
    list->erase(*at);
    return r;
  }
  if (ref.kind == "zones" && at && !body.contains("records") && (*list)[*at].contains("records"))
    body["records"] = (*list)[*at]["records"]; // a zone's records are objects of their own
  if (at) {
    (*list)[*at] = std::move(body);
  } else {
    list->push_back(std::move(body));
    at = list->size() - 1;
    r.status = 201;
  }
  r.pointer = base + "/" + std::to_string(*at);
  return r;
}

std::vector<edit> edits_of(const json& partial, std::string& error) {
  std::vector<edit> out;
  if (!partial.is_object() || partial.empty()) {
    error = "expected a config document holding the objects to apply (datacenters, probes, services, profiles, "
            "zones)";
    return {};
  }
  for (const auto& [section, list] : partial.items()) {
    if (std::find(kinds().begin(), kinds().end(), section) == kinds().end()) {
      error = "/" + section + ": apply takes datacenters, probes, services, profiles and zones; '" + section +
              "' is not an object list (push a whole file to change it)";
      return {};
    }
    if (!list.is_array()) {
      error = "/" + section + ": expected a list";
      return {};
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const json& item = list[i];
      const std::string where = "/" + section + "/" + std::to_string(i);
      if (!item.is_object() || !item.contains("name") || text_of(item["name"]).empty()) {
        error = where + ": each object needs a name";
        return {};
      }
      object_ref ref{section, "", text_of(item["name"]), ""};
      bool records_only = section == "zones" && item.contains("records");
      for (const auto& [k, v] : item.items())
        records_only = records_only && (k == "name" || k == "records");
      if (!records_only) {
        out.push_back(edit{ref, item});
        continue;
      }
      if (!item["records"].is_array()) {
        error = where + "/records: expected a list";
        return {};
      }
      for (size_t j = 0; j < item["records"].size(); ++j) {
        const json& rec = item["records"][j];
        if (!rec.is_object() || !rec.contains("name") || !rec.contains("type")) {
          error = where + "/records/" + std::to_string(j) + ": each record needs a name and a type";
          return {};
        }
        object_ref r{"records", ref.name, relative_record_name(text_of(rec["name"]), ref.name),
                     ascii_upper(text_of(rec["type"]))};
        out.push_back(edit{r, rec});
      }
    }
  }
  return out;
}

} // namespace gtmesh::config_objects
