#include "core/decider/config_api.hpp"

#include "core/config/yaml_lines.hpp"
#include "core/decider/external_dns.hpp"
#include "core/text/ascii_case.hpp"

#include <charconv>
#include <cstring>

namespace gtmesh::decider::config_api {

std::string reply(int status, uint32_t version, const json& body) {
  json r = json::object();
  r["status"] = status;
  r["version"] = version;
  r["body"] = body;
  // Replace, never throw: a text that is not UTF-8 must not end the decider.
  return r.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string error_reply(int status, uint32_t version, const std::string& message) {
  return reply(status, version, json{{"error", message}});
}

std::optional<json> document(const std::string& yaml, std::string& error) {
  auto doc = config_json::parse_yaml(yaml, error);
  if (!doc)
    error = "the running config does not read as YAML: " + error;
  return doc;
}

std::string read(const json& doc, uint32_t version, const std::string& path) {
  std::string error;
  if (path.empty() || path == "config")
    return reply(200, version, doc);
  auto ref = config_objects::parse_path(path, error);
  if (!ref)
    return error_reply(404, version, error);
  auto found = config_objects::get(doc, *ref, error);
  if (!found)
    return error_reply(404, version, error);
  return reply(200, version, *found);
}

std::vector<config_objects::edit> edits_of(const std::string& method, const std::string& path,
                                           const std::string& body, std::string& error) {
  if (method == "APPLY") {
    // A partial config: JSON is YAML too.
    auto doc = config_json::parse_yaml(body, error);
    if (!doc) {
      error = "the objects to apply are not YAML or JSON: " + error;
      return {};
    }
    return config_objects::edits_of(*doc, error);
  }
  auto ref = config_objects::parse_path(path, error);
  if (!ref)
    return {};
  if (method == "DELETE")
    return {config_objects::edit{*ref, std::nullopt}};
  if (method != "PUT") {
    error = "method " + method + " is not allowed: GET, PUT or DELETE";
    return {};
  }
  if (!config_json::json_depth_within(body)) {
    error = "the body nests deeper than " + std::to_string(config_json::max_json_depth) + " levels";
    return {};
  }
  json parsed = json::parse(body, nullptr, false);
  if (parsed.is_discarded()) {
    error = "the body is not JSON";
    return {};
  }
  return {config_objects::edit{*ref, std::move(parsed)}};
}

prepared prepare(json doc, uint32_t version, std::vector<config_objects::edit> edits) {
  prepared p;
  for (const auto& e : edits) {
    auto r = config_objects::apply(doc, e);
    if (r.status >= 400) {
      p.status = r.status;
      p.reply = error_reply(r.status, version, e.ref.path() + ": " + r.error);
      return p;
    }
    p.results.push_back(r);
  }
  p.edits = std::move(edits);
  // Line pointers are worked out again only when the loader finds an error.
  p.yaml = config_json::to_yaml(doc, {}, false).text;
  p.doc = std::move(doc);
  if (p.results.size() == 1)
    p.status = p.results[0].status;
  return p;
}

prepared prepare_webhook(json doc, uint32_t version, const std::string& cluster, const std::string& body) {
  prepared p;
  json changes = config_json::json_depth_within(body) ? json::parse(body, nullptr, false) : json(json::value_t::discarded);
  if (changes.is_discarded() || !changes.is_object()) {
    p.status = 400;
    p.reply = error_reply(400, version, "the body is not a plan.Changes JSON object");
    return p;
  }
  if (std::string why = external_dns::apply_changes(doc, cluster, changes); !why.empty()) {
    p.status = 422;
    p.reply = error_reply(422, version, why);
    return p;
  }
  p.yaml = config_json::to_yaml(doc, {}, false).text;
  p.doc = std::move(doc);
  p.status = 204;
  return p;
}

std::string read_webhook(const json& doc, uint32_t version, const std::string& what, const std::string& cluster) {
  return reply(200, version, what == "filter" ? external_dns::domain_filter(doc) : external_dns::records(doc, cluster));
}

json explain_errors(const prepared& p, const std::vector<std::string>& errors) {
  const config_json::yaml_text text = config_json::to_yaml(p.doc); // the same text, with line pointers
  json list = json::array();
  const std::string prefix = std::string(api_file) + ":";
  for (const auto& e : errors) {
    json item = json::object();
    std::string rest = e;
    std::string pointer;
    if (rest.rfind(prefix, 0) == 0) {
      // api.yaml:LINE:COLUMN: field: why
      size_t at = prefix.size();
      int line = 0;
      auto [end, ec] = std::from_chars(rest.data() + at, rest.data() + rest.size(), line);
      if (ec == std::errc()) {
        size_t after = rest.find(": ", static_cast<size_t>(end - rest.data()));
        pointer = text.pointer_at(line);
        rest = after == std::string::npos ? rest : rest.substr(after + 2);
        // A line in flow style holds several fields: the error's field
        // ("profiles[x].endpoints[b].weight") names which.
        std::string field = rest.substr(0, rest.find(": "));
        std::string last = field.substr(field.rfind('.') == std::string::npos ? 0 : field.rfind('.') + 1);
        last = last.substr(0, last.find('['));
        try {
          const json& at = pointer.empty() ? p.doc : p.doc.at(json::json_pointer(pointer));
          if (at.is_object() && !last.empty() && at.contains(last))
            pointer += "/" + last;
        } catch (const std::exception&) {
        }
      }
    }
    // Into the request when it falls inside an object the request wrote.
    for (size_t i = 0; i < p.results.size() && !pointer.empty(); ++i) {
      const std::string& object = p.results[i].pointer;
      if (!object.empty() && (pointer == object || pointer.rfind(object + "/", 0) == 0)) {
        item["object"] = p.edits[i].ref.path();
        item["pointer"] = pointer.substr(object.size());
        break;
      }
    }
    if (!pointer.empty())
      item["config_pointer"] = pointer;
    item["message"] = rest;
    list.push_back(std::move(item));
  }
  return json{{"error", "the change would make the config invalid; nothing was changed"}, {"errors", list}};
}

namespace {

/// Offset of 1-based `line` in `text` (npos past its end).
size_t line_offset(std::string_view text, int line) {
  size_t at = 0;
  for (int l = 1; l < line; ++l) {
    const void* nl = std::memchr(text.data() + at, '\n', text.size() - at);
    if (!nl)
      return std::string_view::npos;
    at = static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1;
  }
  return at;
}

/// The lines of the list item whose "- " starts the line at `begin`: up to
/// the next line indented no deeper than its dash (blank lines after it are
/// left in place). [begin, end) and the dash's column; nullopt when the line
/// does not start with "- " or a tab indents a line.
struct item_lines {
  size_t begin = 0, end = 0, dash = 0;
};
std::optional<item_lines> item_at(std::string_view text, size_t begin) {
  const yaml::line_shape first = yaml::shape_of(text, begin);
  const size_t after_dash = begin + first.column + 1;
  if (!first.item || after_dash >= text.size() || text[after_dash] != ' ')
    return std::nullopt;
  item_lines it{begin, yaml::next_line(text, begin), first.column};
  for (size_t at = it.end; at < text.size(); at = yaml::next_line(text, at)) {
    const yaml::line_shape s = yaml::shape_of(text, at);
    if (s.bad)
      return std::nullopt;
    const bool blank = s.empty && !s.comment;
    if (!blank && s.column <= it.dash)
      break;
    if (!blank)
      it.end = yaml::next_line(text, at);
  }
  return it;
}

std::string lower_no_dot(std::string_view s) {
  while (!s.empty() && s.back() == '.')
    s.remove_suffix(1);
  return ascii_lower(s);
}

/// Whether `yaml` reads as exactly the list `items`.
bool reads_as(std::string_view yaml, const json& items) {
  std::string error;
  auto parsed = config_json::parse_yaml(yaml, error);
  return parsed && *parsed == items;
}

} // namespace

std::optional<record_change> change_record(const json* doc, const config& cfg, const std::string& text,
                                           const config_objects::edit& e) {
  if (e.ref.kind != "records" || e.ref.is_collection() || !cfg.plain_text || cfg.load_warnings != 0)
    return std::nullopt;
  // The zone and the record: in the JSON document when there is one, else
  // in the model (the same records in the same order: a record's
  // relative name and type, as config_objects matches them).
  size_t zone_index = 0;
  std::optional<size_t> record_index;
  const json* records = nullptr; // the document's records of the zone
  if (doc) {
    // The document's zones are the model's but the generated catalog zone,
    // which the model holds last.
    const size_t catalogs = static_cast<size_t>(
      std::count_if(cfg.zones.begin(), cfg.zones.end(), [](const zone& z) { return z.catalog; }));
    auto place = config_objects::find_record(*doc, e.ref);
    if (!place || cfg.zones.size() - catalogs != (*doc)["zones"].size())
      return std::nullopt;
    zone_index = place->zone;
    record_index = place->record;
    const json& zone_json = (*doc)["zones"][zone_index];
    records = &zone_json["records"];
    if (records->empty() || lower_no_dot(cfg.zones[zone_index].name) != lower_no_dot(config_json::text_of(zone_json["name"])))
      return std::nullopt;
  } else {
    const std::string wanted = lower_no_dot(e.ref.zone);
    while (zone_index < cfg.zones.size() && lower_no_dot(cfg.zones[zone_index].name) != wanted)
      ++zone_index;
    if (zone_index == cfg.zones.size())
      return std::nullopt;
    const zone& z = cfg.zones[zone_index];
    for (size_t k = 0; k < z.records.size() && !record_index; ++k)
      if (std::string(dns::to_string(z.records[k].type)) == e.ref.type &&
          config_objects::relative_record_name(z.records[k].name, z.name) == e.ref.name)
        record_index = k;
  }
  const zone& z = cfg.zones[zone_index];
  const size_t n = z.records.size();
  if (z.catalog || n == 0 || (records && records->size() != n))
    return std::nullopt;
  if (!e.body && !record_index)
    return std::nullopt; // nothing there to delete: prepare() says so
  if (!e.body && n == 1)
    return std::nullopt; // `records:` left empty would read as null, not []
  const size_t index = record_index ? *record_index : n - 1;
  // The items around the change: the one before, the one changed and the
  // one after (for an append, the last). Their lines are read back before
  // and after the change, with the blank lines after them: a blank line
  // left after a deleted item may join a `|+` scalar of the one before.
  const size_t lo = record_index && index > 0 ? index - 1 : index;
  const size_t hi = record_index && index + 1 < n ? index + 1 : index;
  std::vector<item_lines> items;
  for (size_t k = lo; k <= hi; ++k) {
    const size_t begin = line_offset(text, z.records[k].where.line);
    auto item = begin == std::string_view::npos ? std::nullopt : item_at(text, begin);
    if (!item || (!items.empty() && (item->begin < items.back().end || item->dash != items.back().dash)))
      return std::nullopt;
    items.push_back(*item);
  }
  const size_t window_begin = items.front().begin;
  size_t window_end = items.back().end;
  while (window_end < text.size()) { // the blank lines after the last item
    size_t nl = text.find('\n', window_end);
    if (nl == std::string::npos || text.find_first_not_of(' ', window_end) < nl)
      break;
    window_end = nl + 1;
  }
  if (window_end == text.size() && text.back() != '\n')
    return std::nullopt; // an item written after a last line with no newline would join it
  const std::string_view old_window = std::string_view(text).substr(window_begin, window_end - window_begin);
  // Those items as JSON: the document's, which the window must read as;
  // without a document, the window read alone.
  json before = json::array();
  if (records) {
    for (size_t k = lo; k <= hi; ++k)
      before.push_back((*records)[k]);
    if (!reads_as(old_window, before))
      return std::nullopt;
  } else {
    std::string error;
    auto read = config_json::parse_yaml(old_window, error);
    if (!read || !read->is_array() || read->size() != hi - lo + 1)
      return std::nullopt;
    before = std::move(*read);
  }
  // Each is the model's record at its place.
  for (size_t k = lo; k <= hi; ++k) {
    const json& item = before[k - lo];
    if (!item.is_object() || !item.contains("name") || !item.contains("type") ||
        config_objects::relative_record_name(z.records[k].name, z.name) !=
          config_objects::relative_record_name(config_json::text_of(item["name"]), e.ref.zone) ||
        std::string(dns::to_string(z.records[k].type)) != ascii_upper(config_json::text_of(item["type"])))
      return std::nullopt;
  }
  // The edit as apply() makes it, on the zone with that record alone.
  json mini = json::object();
  mini["zones"] = json::array({json{{"name", e.ref.zone}, {"records", json::array()}}});
  if (record_index)
    mini["zones"][0]["records"].push_back(before[index - lo]);
  record_change c;
  c.result = config_objects::apply(mini, e);
  if (c.result.status >= 400)
    return std::nullopt; // prepare() says why
  c.zone = zone_index;
  c.at = record_index;
  if (e.body)
    c.body = mini["zones"][0]["records"][0];
  c.result.pointer = "/zones/" + std::to_string(zone_index) + "/records/" + std::to_string(record_index ? *record_index : n);
  json after = json::array();
  for (size_t k = lo; k <= hi; ++k) {
    if (k != index || !record_index)
      after.push_back(before[k - lo]);
    if (k == index && c.body)
      after.push_back(*c.body);
  }
  const item_lines& changed = items[index - lo];
  std::string written = c.body ? config_json::list_item_yaml(*c.body, changed.dash) : std::string();
  const size_t from = record_index ? changed.begin : changed.end;
  const size_t to = changed.end;
  std::string new_window;
  new_window.append(text, window_begin, from - window_begin);
  new_window += written;
  new_window.append(text, to, window_end - to);
  if (!reads_as(new_window, after))
    return std::nullopt;
  c.yaml.reserve(text.size() - (to - from) + written.size());
  c.yaml.append(text, 0, from);
  c.yaml += written;
  c.yaml.append(text, to, std::string::npos);
  return c;
}

void apply_record_change(json& doc, const record_change& c) {
  json& records = doc["zones"][c.zone]["records"];
  if (!c.body)
    records.erase(*c.at);
  else if (c.at)
    records[*c.at] = *c.body;
  else
    records.push_back(*c.body);
}

std::string export_yaml(const json& doc, uint32_t version) {
  std::string header = std::string(export_marker) + std::to_string(version) +
                       " (gtmeshctl export; comments are not kept).\n"
                       "# `gtmeshctl push` of this file is refused if the API changed the config after it.\n";
  return config_json::to_yaml(doc, header, false).text;
}


} // namespace gtmesh::decider::config_api
