// A change to a loaded config, read in proportion to what changed (SPEC
// section 7; issue 42): the new text is compared with the text the running
// model was loaded from, and when all that differs lies inside the records
// of one zone, only the records it touches are read (docs/config.md,
// "Changes at size").
//
//   base text:  ... [o_a ............ o_b) ...     records a..b-1 of zone z
//   new text:   ... [o_a ........................ o_b + growth) ...
//
// The new bytes between the two item starts are read as a YAML sequence of
// their own, made into records with the loader's usual code, and put in the
// place of records a..b-1 of a copy of the running model (whatever follows
// moved by the lines the change added or removed); the checks that look
// across records run again on the result, and errors are reported as the
// whole load reports them. Anything else (a change outside the records, an
// anchor, an ALIAS record, YAML that does not parse on its own, a change
// that only warns) is not taken here: the caller loads the whole text.

#include "core/config/loader/loader.hpp"
#include "core/config/yaml_lines.hpp"

#include <cstring>
#include <unordered_set>

namespace gtmesh::config_loading {

namespace {

using yaml::line_shape;
using yaml::next_line;
using yaml::shape_of;

constexpr size_t block = 4096;

size_t common_prefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i + block <= n && std::memcmp(a.data() + i, b.data() + i, block) == 0)
    i += block;
  while (i < n && a[i] == b[i])
    ++i;
  return i;
}

/// Bytes equal at the ends of both, at most `limit`.
size_t common_suffix(std::string_view a, std::string_view b, size_t limit) {
  size_t i = 0;
  while (i + block <= limit &&
         std::memcmp(a.data() + a.size() - i - block, b.data() + b.size() - i - block, block) == 0)
    i += block;
  while (i < limit && a[a.size() - 1 - i] == b[b.size() - 1 - i])
    ++i;
  return i;
}

size_t count_newlines(std::string_view t) {
  size_t n = 0;
  const char* p = t.data();
  const char* const end = p + t.size();
  while (p < end && (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p))))) {
    ++n;
    ++p;
  }
  return n;
}

size_t line_start(std::string_view t, size_t pos) {
  while (pos > 0 && t[pos - 1] != '\n')
    --pos;
  return pos;
}

/// True when `t` may define an anchor (`&name` where a node starts): the
/// text around it could then alias what changed. Quoted text with " &"
/// counts too; such a change is only read whole.
bool may_anchor(std::string_view t) {
  for (size_t i = t.find('&'); i != std::string_view::npos; i = t.find('&', i + 1))
    if (i == 0 || std::strchr(" \t\n-:[{,", t[i - 1]))
      return true;
  return false;
}

/// What a change's records said and are, moved from the lines of the part
/// read alone (line 1 its first) to the config's.
void shift_lines(config_errors& errors, config_errors& warnings, std::vector<record>& records, int by) {
  for (config_errors* said : {&errors, &warnings})
    for (config_error& e : *said)
      if (e.line > 0)
        e.line += by;
  for (record& r : records)
    r.where.line += by;
}

/// Whether a record among records[first, first + count) of `records` has
/// the name of one outside that range (`names`: theirs).
bool shares_a_name(const std::vector<record>& records, size_t first, size_t count,
                   const std::unordered_set<std::string_view>& names) {
  for (size_t i = 0; i < records.size(); ++i)
    if ((i < first || i >= first + count) && names.count(records[i].name) != 0)
      return true;
  return false;
}

/// Every element of `c` written at line `from` (1-based) or below moves by
/// `delta` lines: the text above them grew or shrank. Each config_location
/// of the model is here (config_model.hpp says so beside it).
void move_lines(config& c, int from, int delta) {
  auto move = [&](config_location& w) {
    if (w.line >= from)
      w.line += delta;
  };
  for (auto& d : c.datacenters)
    move(d.where);
  for (auto& s : c.services)
    move(s.where);
  for (auto& p : c.profiles) {
    move(p.where);
    for (auto& e : p.endpoints)
      move(e.where);
  }
  for (auto& z : c.zones) {
    move(z.where);
    move(z.dnssec.where);
    move(z.transfer.where);
    for (auto& rule : z.transfer.allow)
      move(rule.where);
    for (auto& r : z.records)
      move(r.where);
  }
  for (auto& k : c.tsig_keys)
    move(k.where);
  move(c.resolver.where);
  move(c.rum.where);
  for (auto& a : c.rum.apps)
    move(a.where);
}

} // namespace

/// True when `t` may hold an alias (`*name` where a node starts): a node
/// read there is a copy of an anchored one, which a change elsewhere may
/// change (two zones' `records:` can be one list). Quoted text with " *"
/// counts too (a wildcard name is quoted: `"*.x"` does not).
bool may_alias(std::string_view t) {
  for (size_t i = t.find('*'); i != std::string_view::npos; i = t.find('*', i + 1))
    if (i == 0 || std::strchr(" \t\n-:[{,", t[i - 1]))
      return true;
  return false;
}

/// True when `t` has a line break other than "\n" (a CR, NEL, U+2028 or
/// U+2029): libyaml, which then reads the text, counts lines by them too,
/// and this file counts "\n" alone.
bool other_line_breaks(std::string_view t) {
  if (t.find('\r') != std::string_view::npos)
    return true;
  for (size_t i = t.find('\xc2'); i != std::string_view::npos; i = t.find('\xc2', i + 1))
    if (i + 1 < t.size() && t[i + 1] == '\x85')
      return true;
  for (size_t i = t.find('\xe2'); i != std::string_view::npos; i = t.find('\xe2', i + 1))
    if (i + 2 < t.size() && t[i + 1] == '\x80' && (t[i + 2] == '\xa8' || t[i + 2] == '\xa9'))
      return true;
  return false;
}

void loader::start_from(const config& base, size_t room) {
  // The arenas copied into buffers with room for what the change adds: a
  // copy of exactly their size grew by doubling at the first answer read,
  // copying them a second time (0.4 s at 1,000,000 records).
  cfg_.answers.reserve(base.answers.size() + room);
  cfg_.answer_locations.reserve(base.answer_locations.size() + room);
  cfg_.answer_values.reserve(base.answer_values.size() + room);
  cfg_ = base;
  index_names();
  for (const zone& z : cfg_.zones)
    zone_names_.insert(z.name);
  // The base's values are not indexed (0.5 s at 1,000,000 records): the
  // records read now intern theirs among themselves, after the base's, so
  // a value they share with an unchanged record is stored twice. Nothing
  // needs one value stored once across records; a whole load packs them.
  const dc_ranking* last = nullptr;
  for (const zone& z : cfg_.zones)
    for (const record& r : z.records)
      if (r.dc && r.dc->ranking.get() != last) {
        last = r.dc->ranking.get();
        const uint64_t h = ranking_hash(*last);
        auto [first, end] = rankings_.equal_range(h);
        bool known = false;
        for (auto it = first; it != end && !known; ++it)
          known = it->second == r.dc->ranking;
        if (!known)
          rankings_.emplace(h, r.dc->ranking);
      }
}

void loader::know_names_of(const config& c) {
  cfg_.datacenters = c.datacenters;
  cfg_.services = c.services;
  cfg_.profiles = c.profiles;
  cfg_.probes = c.probes;
  cfg_.resolver = c.resolver;
  index_names();
}

void loader::index_names() {
  // The first of duplicates wins, as in add() and config::find_*.
  auto index = [](name_index& idx, const auto& list) {
    idx.clear();
    idx.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i)
      idx.emplace(list[i].name, i);
  };
  index(dc_index_, cfg_.datacenters);
  index(service_index_, cfg_.services);
  index(profile_index_, cfg_.profiles);
  index(probe_index_, cfg_.probes);
}

std::optional<load_result> loader::run_change(const config& base, std::string_view base_text, std::string_view text) {
  // Under another file name only when no path in it was relative (the
  // folder it is resolved against may differ; the log keeps file names
  // without their folder): the name is then only what messages say.
  if (scope_ != config_scope::whole || base.load_warnings != 0 || (base.file != file_ && base.relative_paths) ||
      !base.latency_table.empty() || text.size() > max_config_bytes || base.zones.empty())
    return std::nullopt;
  for (const zone& z : base.zones)
    if (z.catalog) // generated from the other zones' transfer: settings
      return std::nullopt;
  const size_t prefix = common_prefix(base_text, text);
  if (prefix == base_text.size() && prefix == text.size())
    return std::nullopt; // the same text: nothing to read
  // Lines counted as a whole load counts them, and no node that copies
  // another: the base's text was looked at when it was loaded (a scan of
  // 17 ms at 100,000 records, more than reading a change), the new part
  // below.
  if (!base.plain_text)
    return std::nullopt;
  const size_t suffix = common_suffix(base_text, text, std::min(base_text.size(), text.size()) - prefix);

  // Where the change lies: base_text[p, q) became text[p, q + growth). A
  // pure insertion or deletion can also be read one byte earlier when the
  // byte before it ends it too; the earliest such place puts a record
  // appended to a zone after that zone's last record, not inside whatever
  // follows. Both places are tried.
  struct span {
    size_t p, q;
  };
  const span found{prefix, base_text.size() - suffix};
  const int64_t growth = static_cast<int64_t>(text.size()) - static_cast<int64_t>(base_text.size());
  span slid = found;
  if (slid.p == slid.q || static_cast<int64_t>(slid.q) + growth == static_cast<int64_t>(slid.p)) {
    const bool inserted = slid.p == slid.q;
    const size_t limit = std::min<size_t>(slid.p, 1 << 20);
    for (size_t moved = 0; moved < limit; ++moved) {
      const char before = base_text[slid.p - 1];
      const char last = inserted ? text[static_cast<size_t>(static_cast<int64_t>(slid.q) + growth) - 1]
                                 : base_text[slid.q - 1];
      if (before != last)
        break;
      --slid.p;
      --slid.q;
    }
  }

  // The records the change touches: a..b-1 of zone `zi`, their items at
  // base_text[o_a, o_b).
  struct place {
    size_t zi = 0, a = 0, b = 0, o_a = 0, o_b = 0;
    size_t line_a = 0, line_b = 0; ///< of o_a and o_b, 0-based
    int64_t line_shift = 0;         ///< lines the new part has more than the old
  };
  auto locate = [&](span c) -> std::optional<place> {
    const size_t p_line = count_newlines(base_text.substr(0, c.p)); // 0-based
    place at;
    bool in_zone = false;
    for (size_t zi = base.zones.size(); zi-- > 0 && !in_zone;) {
      const auto& rs = base.zones[zi].records;
      if (rs.empty() || static_cast<size_t>(rs.front().where.line) - 1 > p_line)
        continue;
      auto after = std::upper_bound(rs.begin(), rs.end(), p_line,
                                    [](size_t line, const record& r) { return line < static_cast<size_t>(r.where.line) - 1; });
      at.zi = zi;
      at.a = static_cast<size_t>(after - rs.begin()) - 1;
      in_zone = true;
    }
    if (!in_zone)
      return std::nullopt;
    const auto& rs = base.zones[at.zi].records;
    const size_t n = rs.size();
    at.line_a = static_cast<size_t>(rs[at.a].where.line) - 1;
    at.o_a = line_start(base_text, c.p);
    for (size_t l = p_line; l > at.line_a; --l)
      at.o_a = line_start(base_text, at.o_a - 1);
    const line_shape first = shape_of(base_text, at.o_a);
    // The record's mapping starts on its item's line ("- name: ..."),
    // right of the dash.
    if (!first.item || first.bad || static_cast<size_t>(rs[at.a].where.column) - 1 <= first.column)
      return std::nullopt;
    const size_t column = first.column;

    const size_t q_line = p_line + count_newlines(base_text.substr(c.p, c.q - c.p));
    const bool q_at_line_start = c.q == 0 || base_text[c.q - 1] == '\n';
    const size_t free_line = q_at_line_start ? q_line : q_line + 1; // the first line the change leaves alone
    at.b = static_cast<size_t>(
      std::lower_bound(rs.begin() + static_cast<std::ptrdiff_t>(at.a) + 1, rs.end(), free_line,
                       [](const record& r, size_t line) { return static_cast<size_t>(r.where.line) - 1 < line; }) -
      rs.begin());
    // The start of the line `line` (0-based) at or after offset `from`, on
    // line `from_line`.
    auto walk = [&](size_t from, size_t from_line, size_t line) {
      for (; from_line < line && from < base_text.size(); ++from_line)
        from = next_line(base_text, from);
      return from;
    };
    const size_t free_at = q_at_line_start ? c.q : next_line(base_text, c.q);
    // The end of the zone's records: the first line after its last record's
    // item that is neither blank, a comment nor indented past the items.
    auto end_of_records = [&](size_t last_item) {
      size_t o = next_line(base_text, last_item);
      while (o < base_text.size()) {
        const line_shape s = shape_of(base_text, o);
        if (!s.empty && s.column <= column)
          break;
        o = next_line(base_text, o);
      }
      return o;
    };
    if (at.b < n) {
      at.o_b = walk(free_at, free_line, static_cast<size_t>(rs[at.b].where.line) - 1);
      const line_shape s = shape_of(base_text, at.o_b);
      if (!s.item || s.column != column)
        return std::nullopt;
    } else {
      const size_t last_line = static_cast<size_t>(rs[n - 1].where.line) - 1;
      const size_t last_item =
        last_line >= free_line ? walk(free_at, free_line, last_line) : walk(at.o_a, at.line_a, last_line);
      at.o_b = end_of_records(last_item);
      if (at.o_b < c.q)
        return std::nullopt; // past the zone's records
    }
    const std::string_view old_part = base_text.substr(at.o_a, at.o_b - at.o_a);
    const std::string_view new_part =
      text.substr(at.o_a, static_cast<size_t>(static_cast<int64_t>(at.o_b - at.o_a) + growth));
    const size_t old_lines = count_newlines(old_part);
    at.line_b = at.line_a + old_lines;
    at.line_shift = static_cast<int64_t>(count_newlines(new_part)) - static_cast<int64_t>(old_lines);
    // The new part is items of this sequence and nothing else, from its
    // first line on: a blank or comment line before its first item could
    // belong to a block scalar that ends the record before (`|+` keeps
    // trailing blank lines), which is not read again.
    if (may_anchor(old_part) || may_anchor(new_part) || may_alias(new_part) || other_line_breaks(new_part))
      return std::nullopt;
    if (!new_part.empty()) {
      const line_shape head = shape_of(new_part, 0);
      if (!head.item || head.column != column)
        return std::nullopt;
    }
    if (!new_part.empty() && new_part.back() != '\n' && at.o_a + new_part.size() != text.size())
      return std::nullopt;
    bool seen_item = false;
    for (size_t o = 0; o < new_part.size(); o = next_line(new_part, o)) {
      const line_shape s = shape_of(new_part, o);
      if (s.bad)
        return std::nullopt;
      if (s.empty)
        continue;
      if (s.item && s.column == column)
        seen_item = true;
      else if (s.column <= column || !seen_item)
        return std::nullopt;
    }
    for (size_t i = at.a; i < at.b; ++i)
      if (rs[i].type == dns::rr_type::alias)
        return std::nullopt;
    return at;
  };
  std::optional<place> at = locate(found);
  if (!at && (slid.p != found.p))
    at = locate(slid);
  if (!at)
    return std::nullopt;

  const zone& old_zone = base.zones[at->zi];
  const std::string_view new_part =
    text.substr(at->o_a, static_cast<size_t>(static_cast<int64_t>(at->o_b - at->o_a) + growth));
  yaml::parse_result parsed = yaml::parse(new_part);
  if (!parsed.doc)
    return std::nullopt;
  const node items = parsed.doc->root();
  if (items && !items.is_null() && !items.is_sequence())
    return std::nullopt;

  const std::string field_of_zone = old_zone.field;
  if (field_of_zone.empty())
    return std::nullopt;
  const std::string field = field_of_zone + ".records";
  const auto read_from_line = static_cast<int>(at->line_a); // the lines of what is read count from there
  // The files the whole load checks are still there (it says so when not).
  std::error_code ec;
  for (const std::string* f : {&base.geo_database, &base.asn_database})
    if (!f->empty() && !std::filesystem::exists(*f, ec))
      return std::nullopt;

  // Errors are said as the whole load says them. When the records read
  // alone give them and nothing else could add to them (no name among
  // them is another record's, so the names check sees them alone; no
  // rum.join, which reads every zone), that is done before the running
  // model is copied: a typo in one record of 1,000,000 costs that record,
  // not a copy of the model (400 MB at the peak). Only for a part under a
  // quarter of the text and first_read_max: past that, reading a valid
  // change twice costs more than the copy it spares.
  if (items.is_sequence() && base.rum.join.empty() && new_part.size() < std::min(text.size() / 4, first_read_max)) {
    loader trial(file_, base_dir_, methods_, scope_, origin_);
    trial.keep_nodes_ = true; // read again below when they are right
    trial.know_names_of(base);
    zone read;
    read.name = old_zone.name;
    read.field = old_zone.field;
    read.where = old_zone.where;
    trial.parse_records(items, field, 0, items.size(), read, at->a);
    if (!trial.errors_.empty()) {
      shift_lines(trial.errors_, trial.warnings_, read.records, read_from_line);
      std::unordered_set<std::string_view> names;
      bool alone = true;
      for (const record& r : read.records) {
        names.insert(r.name);
        alone = alone && r.type != dns::rr_type::alias;
      }
      if (alone && !shares_a_name(old_zone.records, at->a, at->b - at->a, names)) {
        trial.check_record_names(read, field_of_zone);
        trial.cfg_.zones.push_back(std::move(read));
        trial.check_apex_cnames();
        return trial.refused();
      }
    }
  }

  start_from(base, new_part.size() / 4 + 64); // an answer takes 4 bytes of text at the least
  if (at->line_shift != 0)
    move_lines(cfg_, static_cast<int>(at->line_b) + 1, static_cast<int>(at->line_shift));
  zone made;
  made.name = old_zone.name;
  if (items.is_sequence())
    parse_records(items, field, 0, items.size(), made, at->a);
  parsed.doc.reset();
  // Errors are said here as the whole load says them (a typo in one record
  // of 1,000,000 is refused without reading the rest); a change that only
  // warns is left to the whole load, whose model keeps its warnings.
  if (errors_.empty() && !warnings_.empty())
    return std::nullopt;
  shift_lines(errors_, warnings_, made.records, read_from_line);
  for (const record& r : made.records)
    if (r.type == dns::rr_type::alias)
      return std::nullopt;

  // In place: the records replaced one for one are assigned, the rest
  // erased or inserted (a fresh vector of 100,000 records cost 30 ms).
  zone& z = cfg_.zones[at->zi];
  const size_t made_count = made.records.size();
  const size_t common = std::min(at->b - at->a, made.records.size());
  for (size_t i = 0; i < common; ++i)
    z.records[at->a + i] = std::move(made.records[i]);
  const auto tail = z.records.begin() + static_cast<std::ptrdiff_t>(at->a + common);
  if (made.records.size() > common)
    z.records.insert(tail, std::make_move_iterator(made.records.begin() + static_cast<std::ptrdiff_t>(common)),
                     std::make_move_iterator(made.records.end()));
  else
    z.records.erase(tail, z.records.begin() + static_cast<std::ptrdiff_t>(at->b));
  if (z.records.empty())
    return std::nullopt; // a zone without records: the whole load says what it makes of that

  // Answers of the records replaced stay in the arena unused; past a third
  // unused, a whole load packs it again.
  size_t used = 0;
  for (const zone& each_zone : cfg_.zones)
    for (const record& r : each_zone.records) {
      used += r.plain.count;
      if (r.dc) {
        used += r.dc->fail_safe.count;
        for (const auto& d : r.dc->answers)
          used += d.answers.count;
      }
      if (r.static_rules)
        for (const auto& d : r.static_rules->answers)
          used += d.answers.count;
    }
  if (cfg_.answers.size() > used + used / 2 + 1024)
    return std::nullopt;

  // What reads across records, as the whole load checks it and in its
  // order (references and the failover budget only when nothing else was
  // wrong). The zone's names: the base's were clean, so only a name a
  // record read shares can clash; the whole check (0.3 s at 1,000,000
  // records) runs only when one is shared.
  std::unordered_set<std::string_view> fresh;
  bool shared_name = false;
  for (size_t i = 0; i < made_count; ++i)
    shared_name |= !fresh.insert(z.records[at->a + i].name).second;
  if (shared_name || shares_a_name(z.records, at->a, made_count, fresh))
    check_record_names(z, z.field);
  check_apex_cnames();
  if (!cfg_.rum.join.empty())
    check_rum_join();
  if (errors_.empty())
    check_references();
  if (errors_.empty() && cfg_.failover_budget_ms > 0)
    check_failover_budget();
  if (!errors_.empty())
    return refused();
  if (!warnings_.empty())
    return std::nullopt;
  load_result result;
  cfg_.file = file_;
  cfg_.load_warnings = 0;
  result.cfg = std::make_shared<const config>(std::move(cfg_));
  return result;
}

} // namespace gtmesh::config_loading
