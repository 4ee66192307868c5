// The `zones` section: SOA, NS and records, with their answers and their
// DC-mode and static policies.

#include "core/config/loader/loader.hpp"
#include "core/text/ascii_case.hpp"
#include "core/runtime/side_thread.hpp"


namespace gtmesh::config_loading {

namespace {

/// The address `s` names if it is one of `type`'s family (A: IPv4, AAAA:
/// IPv6).
std::optional<ip_address> address_of_type(std::string_view s, dns::rr_type type) {
  auto a = ip_address::parse(s);
  if (!a || a->v4() != (type == dns::rr_type::a))
    return std::nullopt;
  return a;
}

/// The largest weight of an answer.
constexpr long long max_answer_weight = 1000;

/// `{address: A}` or `{address: A, weight: W}` (either order, no other
/// key) with A of `type`'s family and W an integer 1..max_answer_weight:
/// A, and W in `weight` (left alone without one). nullopt for anything
/// else, which parse_answer then reads and words the errors of.
std::optional<ip_address> weighted_address(const yaml::node& n, dns::rr_type type, uint32_t& weight) {
  yaml::node address, w;
  for (size_t i = 0; i < n.size(); ++i) {
    const yaml::node key = n.key_at(i);
    const std::string_view k = key.is_scalar() ? key.scalar() : std::string_view();
    yaml::node& slot = k == "address" ? address : w;
    if ((k != "address" && k != "weight") || slot)
      return std::nullopt; // another key, or one twice
    slot = n.value_at(i);
  }
  if (!address.is_scalar() || (w && !w.is_scalar()))
    return std::nullopt;
  auto a = address_of_type(address.scalar(), type);
  if (!a || !w)
    return a;
  auto v = to_int(w.scalar());
  if (!v || *v < 1 || *v > max_answer_weight)
    return std::nullopt;
  weight = static_cast<uint32_t>(*v);
  return a;
}

int per_dc_max(balance_kind b, size_t answers) {
  switch (b) {
    case balance_kind::all:
      return static_cast<int>(answers);
    case balance_kind::top1:
      return 1;
    case balance_kind::top2:
      return std::min<int>(2, static_cast<int>(answers));
    case balance_kind::top3:
      return std::min<int>(3, static_cast<int>(answers));
    default:
      return 1;
  }
}

} // namespace

void loader::parse_zone(const node& n, const std::string& field) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("zone"));
  zone z;
  z.where = where(n);
  z.field = field;
  if (auto v = str(n, "name", field, true)) {
    auto wire = dns::text_to_wire(*v);
    if (!wire)
      error(child(n, "name"), join(field, "name"), "not a valid domain name: '" + *v + "'");
    else if (misplaced_asterisk(*wire, false))
      error(child(n, "name"), join(field, "name"),
            "'*' in a zone name: an apex cannot be a wildcard (add a record named '*' to the zone instead)");
    z.name = dns::canonical_text(*v);
  }
  auto abs_name = [&](const std::string& s) {
    return s.ends_with(".") ? dns::canonical_text(s) : dns::canonical_text(s + "." + z.name);
  };
  if (node soa = child(n, "soa")) {
    std::string sf = join(field, "soa");
    if (is_map(soa, sf)) {
      check_keys(soa, sf, config_fields::keys_of("soa"));
      if (auto v = str(soa, "primary", sf, true))
        z.soa.primary = abs_name(*v);
      if (auto v = str(soa, "admin", sf, true)) {
        // The mail form hostmaster@example.com is accepted too: its domain is
        // complete, and dots in the local part stay inside the first label
        // (RFC 1035 8: dns.admin@example.org -> dns\.admin.example.org.).
        if (auto at = v->find('@'); at != std::string::npos) {
          std::string local;
          for (char c : v->substr(0, at)) {
            if (c == '.' || c == '\\')
              local.push_back('\\');
            local.push_back(c);
          }
          z.soa.admin = dns::canonical_text(local + "." + v->substr(at + 1));
        } else {
          z.soa.admin = abs_name(*v);
        }
      }
      if (auto v = integer(soa, "serial", sf, 1, 4294967295LL))
        z.soa.serial = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "refresh", sf, 1, 2147483647))
        z.soa.refresh = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "retry", sf, 1, 2147483647))
        z.soa.retry = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "expire", sf, 1, 2147483647))
        z.soa.expire = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "minimum", sf, 0, 86400))
        z.soa.minimum = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "ttl", sf, 0, 2147483647))
        z.soa.ttl = static_cast<uint32_t>(*v);
      for (auto* nm : {&z.soa.primary, &z.soa.admin})
        if (!nm->empty() && !dns::text_to_wire(*nm))
          error(soa, sf, "not a valid domain name: '" + *nm + "'");
    }
  } else {
    error(n, join(field, "soa"), "required field is missing");
  }
  if (node d = child(n, "dnssec"))
    parse_dnssec(d, join(field, "dnssec"), z.dnssec);
  if (node t = child(n, "transfer"))
    parse_transfer(t, join(field, "transfer"), z);
  auto ns = str_list(n, "ns", field);
  if (ns.empty())
    error(n, join(field, "ns"), "at least one name server is required");
  for (auto& [s, sn] : ns) {
    std::string a = abs_name(s);
    if (!dns::text_to_wire(a))
      error(sn, join(field, "ns"), "not a valid domain name: '" + s + "'");
    z.ns.push_back(a);
  }
  if (auto v = integer(n, "ns_ttl", field, 0, 2147483647))
    z.ns_ttl = static_cast<uint32_t>(*v);
  if (!zone_names_.insert(z.name).second)
    error(n, join(field, "name"), "duplicate zone '" + z.name + "'");
  node records = child(n, "records");
  if (records.is_sequence())
    z.records.reserve(records.size());
  if (records.is_sequence() && records.size() >= std::max<size_t>(2, parallel_records_min.load()) &&
      std::thread::hardware_concurrency() >= 2)
    parse_records_in_two(records, join(field, "records"), z);
  else
    each(n, "records", field, [&](const node& rn, const std::string& rf) { parse_record(rn, rf, z); });
  check_record_names(z, field);
  cfg_.zones.push_back(std::move(z));
}


void loader::parse_dnssec(const node& d, const std::string& field, dnssec_settings& out) {
  if (!is_map(d, field))
    return;
  check_keys(d, field, config_fields::keys_of("dnssec"));
  out.enabled = true;
  out.where = where(d);
  if (auto v = str(d, "algorithm", field)) {
    std::string a = ascii_lower(*v);
    if (a == "13" || a == "ecdsap256sha256" || a == "ecdsa-p256")
      out.algorithm = 13;
    else if (a == "15" || a == "ed25519")
      out.algorithm = 15;
    else
      error(child(d, "algorithm"), join(field, "algorithm"),
            "unknown algorithm '" + *v + "': ecdsap256sha256 (13, the default) or ed25519 (15)");
  }
  if (auto v = str(d, "key", field, true))
    out.key = resolve_path(*v);
  for (auto& [s, sn] : str_list(d, "publish", field))
    out.publish.push_back(resolve_path(s));
  constexpr int64_t hour = 3600000, day = 24 * hour;
  if (auto v = duration(d, "validity", field, hour, 90 * day))
    out.validity_ms = *v;
  if (auto v = duration(d, "refresh", field, 60000, 90 * day))
    out.refresh_ms = *v;
  if (auto v = duration(d, "inception_offset", field, 0, day))
    out.inception_offset_ms = *v;
  if (out.refresh_ms * 2 > out.validity_ms)
    error(d, join(field, "refresh"),
          "must be at most half of validity (a served signature then always has half its validity left)");
  for (auto& [s, sn] : str_list(d, "ds", field)) {
    std::string hex = ascii_lower(s);
    bool ok = hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!ok)
      error(sn, join(field, "ds"), "expected the SHA-256 digest of a DS record (64 hex digits, as gtmeshctl dnssec ds prints it)");
    out.ds.push_back(hex);
  }
}

void loader::parse_records(const node& list, const std::string& list_field, size_t begin, size_t end, zone& z,
                           size_t first_index) {
  // A record's nodes are read only while it is made: every 1,024 records
  // (release_nodes_every), those before the next one go back to the system
  // (yaml::release_nodes), so the node table shrinks as the model grows.
  // Each time the whole run made so far, so that pages a shorter run only
  // partly covered go too (pages given back already cost nothing again).
  const size_t release_every = std::max<size_t>(1, release_nodes_every.load());
  size_t made = 0;
  for (size_t i = begin; i < end; ++i) {
    const node item = list[i];
    std::string f = element(list_field, item, first_index + i);
    enter(item, f);
    parse_record(item, f, z);
    if (++made % release_every == 0 && i + 1 < list.size() && !keep_nodes_)
      yaml::release_nodes(list[begin], list[i + 1]);
  }
}

void loader::parse_records_in_two(const node& list, const std::string& list_field, zone& z) {
  // Halves of equal work, not of equal count: a DC-mode record with 16
  // answers is ten times a profile record. A record's work is about its
  // number of YAML nodes, the distance to the next record's document order.
  // The helper starts cold (its thread, malloc arena and value table) and
  // finished 20-40 ms after this thread at 100,000 records when given half
  // the nodes: it gets 47 %.
  const uint32_t first = list[0].document_order();
  const uint32_t middle =
    first + static_cast<uint32_t>((uint64_t{list[list.size() - 1].document_order()} - first) * 53 / 100);
  size_t half = 1;
  while (half < list.size() - 1 && list[half].document_order() < middle)
    ++half;
  // The helper reads records only: it needs the names they refer to.
  loader helper(file_, base_dir_, methods_, scope_);
  helper.know_names_of(cfg_);
  zone second;
  second.name = z.name;
  second.records.reserve(list.size() - half);
  {
    side_thread other([&] { helper.parse_records(list, list_field, half, list.size(), second); });
    if (!other.started()) { // no thread to be had: read them all here
      parse_records(list, list_field, 0, list.size(), z);
      return;
    }
    parse_records(list, list_field, 0, half, z);
    other.join(); // also joined when the line above throws
  }

  // Its answers follow ours in the arena; its values are interned here in
  // the order it met them, which is the order reading on would have.
  std::vector<uint32_t> value_index(helper.cfg_.answer_values.size());
  reserve_values(cfg_.answer_values.size() + value_index.size());
  for (size_t i = 0; i < value_index.size(); ++i)
    value_index[i] = intern_value(helper.cfg_.answer_values[static_cast<uint32_t>(i)]);
  // The helper's copies go as soon as they are taken over: this is the
  // load's peak, with the whole node table and nearly all the model alive
  // (issue 42).
  helper.cfg_.answer_values.clear();
  decltype(helper.value_slots_)().swap(helper.value_slots_);
  const auto answer_base = static_cast<uint32_t>(cfg_.answers.size());
  const auto location_base = static_cast<uint32_t>(cfg_.answer_locations.size());
  cfg_.answers.reserve(cfg_.answers.size() + helper.cfg_.answers.size());
  for (answer_item a : helper.cfg_.answers) {
    a.value = value_index[a.value];
    if (a.location != no_answer_location)
      a.location += location_base;
    cfg_.answers.push_back(a);
  }
  std::vector<answer_item>().swap(helper.cfg_.answers);
  cfg_.answer_locations.insert(cfg_.answer_locations.end(), helper.cfg_.answer_locations.begin(),
                               helper.cfg_.answer_locations.end());
  for (record& r : second.records) {
    r.plain.first += answer_base;
    if (r.dc) {
      r.dc->fail_safe.first += answer_base;
      for (auto& d : r.dc->answers)
        d.answers.first += answer_base;
    }
    if (r.static_rules)
      for (auto& d : r.static_rules->answers)
        d.answers.first += answer_base;
    z.records.push_back(std::move(r));
  }
  errors_.insert(errors_.end(), helper.errors_.begin(), helper.errors_.end());
  warnings_.insert(warnings_.end(), helper.warnings_.begin(), helper.warnings_.end());
}

void loader::check_record_names(const zone& z, const std::string& field) {
  // One record per (name, type); CNAME beside other data is allowed as the
  // spec asks (a name can carry A, MX and CNAME policies) but flagged. One
  // pass in config order over a table of names (open addressing, no copy of
  // any name): each name's first record and the types seen at it.
  struct name_slot {
    size_t hash = 0;
    uint32_t first = 0; ///< index of the name's first record + 1; 0: empty
    uint64_t types = 0; ///< bit t: a record of type t
    uint32_t alias = 0; ///< index of its ALIAS record + 1; 0: none
  };
  // Every type a record can have (dns::parse_rr_type, ANY refused) is below
  // 63; a type above would share bit 63.
  // ALIAS (65401) gets bit 62, which no served type has.
  auto type_bit = [](dns::rr_type t) {
    return t == dns::rr_type::alias ? uint64_t{1} << 62
                                    : uint64_t{1} << std::min<uint16_t>(static_cast<uint16_t>(t), 63);
  };
  const uint64_t cname = type_bit(dns::rr_type::cname);
  const uint64_t alias = type_bit(dns::rr_type::alias);
  const uint64_t alias_conflicts = type_bit(dns::rr_type::a) | type_bit(dns::rr_type::aaaa) | cname;
  size_t capacity = 64;
  while (capacity < z.records.size() * 2)
    capacity *= 2;
  std::vector<name_slot> table(capacity);
  const size_t mask = capacity - 1;
  std::vector<uint32_t> cname_and_other; // first records of the names to warn about
  std::vector<uint32_t> alias_beside;    // ALIAS records with an A, AAAA or CNAME at their name
  for (uint32_t i = 0; i < z.records.size(); ++i) {
    const record& r = z.records[i];
    const size_t h = std::hash<std::string>{}(r.name);
    size_t pos = h & mask;
    while (table[pos].first != 0 && (table[pos].hash != h || z.records[table[pos].first - 1].name != r.name))
      pos = (pos + 1) & mask;
    name_slot& n = table[pos];
    if (n.first == 0) {
      n.hash = h;
      n.first = i + 1;
    }
    const uint64_t bit = type_bit(r.type);
    if (n.types & bit)
      error_at(r.where, field + ".records", "duplicate record " + r.name + " " + std::string(dns::to_string(r.type)));
    const bool had_both = (n.types & cname) && (n.types & ~(cname | alias));
    const bool had_conflict = (n.types & alias) && (n.types & alias_conflicts);
    n.types |= bit;
    if (bit == alias && n.alias == 0)
      n.alias = i + 1;
    if (!had_both && (n.types & cname) && (n.types & ~(cname | alias)))
      cname_and_other.push_back(n.first - 1);
    if (!had_conflict && (n.types & alias) && (n.types & alias_conflicts))
      alias_beside.push_back(n.alias - 1);
  }
  for (uint32_t a : alias_beside)
    error_at(z.records[a].where, field + ".records[" + z.records[a].name + "]",
             "an ALIAS answers A and AAAA at " + z.records[a].name +
               " itself: no A, AAAA or CNAME record may share its name");
  std::sort(cname_and_other.begin(), cname_and_other.end(),
            [&](uint32_t a, uint32_t b) { return z.records[a].name < z.records[b].name; });
  for (uint32_t first : cname_and_other)
    warnings_.push_back(config_error{file_, z.where.line, z.where.column, field + ".records",
                                     z.records[first].name + " has a CNAME beside other types; queries for types "
                                     "without a record of their own get the CNAME (RFC 1034 forbids the mix)"});
}

uint32_t loader::value_hash(const answer_value& v) noexcept {
  auto mix = [](uint64_t h, uint64_t x) { return (h ^ x) * 0x9e3779b97f4a7c15ULL; };
  ip_key k = v.address.key();
  uint64_t h = static_cast<uint64_t>(v.type) + 1;
  h = mix(h, static_cast<uint64_t>(k));
  h = mix(h, static_cast<uint64_t>(k >> 64));
  if (!v.target.empty())
    h = mix(h, std::hash<std::string>{}(v.target));
  for (const auto& t : v.txt)
    h = mix(h, std::hash<std::string>{}(t));
  h = mix(h, (uint64_t{v.preference} << 48) | (uint64_t{v.priority} << 32) | (uint64_t{v.srv_weight} << 16) | v.port);
  return static_cast<uint32_t>(h >> 32) ^ static_cast<uint32_t>(h);
}

void loader::reserve_values(size_t count) {
  cfg_.answer_values.reserve(count);
  if (count * 2 <= value_slots_.size())
    return;
  size_t slots = std::max<size_t>(64, value_slots_.size());
  while (count * 2 > slots)
    slots *= 2;
  std::vector<std::pair<uint32_t, uint32_t>> grown(slots);
  const size_t mask = grown.size() - 1;
  for (const auto& s : value_slots_)
    if (s.second != 0) {
      size_t pos = s.first & mask;
      while (grown[pos].second != 0)
        pos = (pos + 1) & mask;
      grown[pos] = s;
    }
  value_slots_ = std::move(grown);
}

uint32_t loader::intern_value(answer_value&& v) {
  auto& values = cfg_.answer_values;
  // By the values this table holds, not the pool's: a change read in
  // proportion starts from a pool it has not indexed (change.cpp), and
  // sizing by that would reserve twice 1,500,000 values for one record.
  if ((values_interned_ + 1) * 2 > value_slots_.size())
    reserve_values(std::max<size_t>(32, values_interned_ * 2));
  const size_t mask = value_slots_.size() - 1;
  const uint32_t h = value_hash(v);
  for (size_t pos = h & mask;; pos = (pos + 1) & mask) {
    auto& s = value_slots_[pos];
    if (s.second == 0) {
      s = {h, static_cast<uint32_t>(values.size()) + 1};
      ++values_interned_;
      values.push_back(std::move(v));
      return s.second - 1;
    }
    if (s.first == h && values.equals(s.second - 1, v))
      return s.second - 1;
  }
}

void loader::store_answer(parsed_answer&& a) {
  answer_item item;
  item.value = intern_value(std::move(a.value));
  item.weight = a.weight;
  if (a.location) {
    item.location = static_cast<uint32_t>(cfg_.answer_locations.size());
    cfg_.answer_locations.push_back(*a.location);
  }
  cfg_.answers.push_back(item);
}

bool loader::parse_answer(const node& n, const std::string& field, dns::rr_type type, const zone& z,
                          parsed_answer& out) {
  using dns::rr_type;
  answer_value& v = out.value;
  v.type = type;
  // `key`: the field under `field` the value is read from ("" = `field`);
  // its path is built only for an error.
  auto field_of = [&](std::string_view key) { return key.empty() ? field : join(field, key); };
  auto name_of = [&](const std::string& s, const node& at, std::string_view key) -> bool {
    std::string abs = s.ends_with(".") ? dns::canonical_text(s) : dns::canonical_text(s + "." + z.name);
    if (s == "." || !dns::text_to_wire(abs)) {
      error(at, field_of(key), "not a valid domain name: '" + s + "'");
      return false;
    }
    v.target = abs;
    return true;
  };
  auto address_of = [&](const std::string& s, const node& at, std::string_view key) -> bool {
    auto a = address_of_type(s, type);
    if (!a) {
      error(at, field_of(key), std::string("expected an ") + (type == rr_type::a ? "IPv4" : "IPv6") + " address, got '" + s + "'");
      return false;
    }
    v.address = *a;
    return true;
  };
  if (n.is_scalar()) {
    const std::string& s = n.text();
    switch (type) {
      case rr_type::a:
      case rr_type::aaaa:
        return address_of(s, n, "");
      case rr_type::cname:
      case rr_type::ptr:
        return name_of(s, n, "");
      case rr_type::txt:
        v.txt.push_back(s);
        break;
      case rr_type::mx: {
        std::stringstream ss(s);
        std::string pref, host, extra;
        ss >> pref >> host >> extra;
        auto p = to_int(pref);
        if (!p || *p < 0 || *p > 65535 || host.empty() || !extra.empty()) {
          error(n, field, "expected \"PREFERENCE EXCHANGE\", e.g. \"10 mail.example.com.\"");
          return false;
        }
        v.preference = static_cast<uint16_t>(*p);
        return name_of(host, n, "");
      }
      case rr_type::srv: {
        std::stringstream ss(s);
        std::string pr, w, port, host, extra;
        ss >> pr >> w >> port >> host >> extra;
        auto a = to_int(pr), b = to_int(w), c = to_int(port);
        if (!a || !b || !c || *a < 0 || *a > 65535 || *b < 0 || *b > 65535 || *c < 0 || *c > 65535 ||
            host.empty() || !extra.empty()) {
          error(n, field, "expected \"PRIORITY WEIGHT PORT TARGET\", e.g. \"10 5 443 web.example.com.\"");
          return false;
        }
        v.priority = static_cast<uint16_t>(*a);
        v.srv_weight = static_cast<uint16_t>(*b);
        v.port = static_cast<uint16_t>(*c);
        return name_of(host, n, "");
      }
      default:
        error(n, field, "unsupported record type");
        return false;
    }
    for (const auto& t : v.txt)
      if (t.size() > 255)
        warn(n, field, "TXT text longer than 255 octets is split into several character-strings");
    return true;
  }
  if (!is_map(n, field))
    return false;
  static const auto answer_keys = config_fields::keys_of("answer");
  check_keys(n, field, answer_keys);
  if (auto w = integer(n, "weight", field, 1, max_answer_weight))
    out.weight = static_cast<uint32_t>(*w);
  if (auto at = parse_location(n, field))
    out.location = at;
  switch (type) {
    case rr_type::a:
    case rr_type::aaaa:
      if (auto s = str(n, "address", field, true))
        return address_of(*s, child(n, "address"), "address");
      return false;
    case rr_type::cname:
    case rr_type::ptr:
      if (auto s = str(n, "target", field, true))
        return name_of(*s, child(n, "target"), "target");
      return false;
    case rr_type::mx: {
      auto host = str(n, "exchange", field);
      if (!host)
        host = str(n, "target", field, true);
      if (auto p = integer(n, "preference", field, 0, 65535))
        v.preference = static_cast<uint16_t>(*p);
      return host && name_of(*host, n, "");
    }
    case rr_type::srv: {
      auto host = str(n, "target", field, true);
      if (auto p = integer(n, "priority", field, 0, 65535))
        v.priority = static_cast<uint16_t>(*p);
      if (auto p = integer(n, "srv_weight", field, 0, 65535))
        v.srv_weight = static_cast<uint16_t>(*p);
      if (auto p = integer(n, "port", field, 0, 65535, true))
        v.port = static_cast<uint16_t>(*p);
      return host && name_of(*host, child(n, "target"), "target");
    }
    case rr_type::txt: {
      auto texts = str_list(n, "text", field);
      if (texts.empty()) {
        error(n, join(field, "text"), "required field is missing");
        return false;
      }
      for (auto& [t, tn] : texts)
        v.txt.push_back(t);
      return true;
    }
    default:
      error(n, field, "unsupported record type");
      return false;
  }
}

answer_span loader::parse_answers(const node& n, const std::string& parent, std::string_view key,
                                  dns::rr_type type, const zone& z) {
  answer_span out{static_cast<uint32_t>(cfg_.answers.size()), 0};
  std::string f; // join(parent, key), built when first needed
  auto field = [&]() -> const std::string& {
    if (f.empty())
      f = join(parent, key);
    return f;
  };
  auto add = [&](const node& an, size_t index) {
    parsed_answer a;
    if (dns::is_address(type)) {
      // The common forms, `192.0.2.1` and `{address: 192.0.2.1, weight: 2}`,
      // without building field paths; anything else (or wrong) goes the
      // long way, which words the errors.
      std::optional<ip_address> address;
      if (an.is_scalar())
        address = address_of_type(an.scalar(), type);
      else if (an.is_map())
        address = weighted_address(an, type, a.weight);
      if (address) {
        a.value.type = type;
        a.value.address = *address;
        store_answer(std::move(a));
        ++out.count;
        return;
      }
    }
    std::string af = index == SIZE_MAX ? field() : field() + "[" + std::to_string(index) + "]";
    if (parse_answer(an, af, type, z, a)) {
      store_answer(std::move(a));
      ++out.count;
    }
  };
  if (!n.is_sequence()) {
    add(n, SIZE_MAX);
    return out;
  }
  for (size_t i = 0; i < n.size(); ++i)
    add(n[i], i);
  if (out.count > static_cast<size_t>(max_answers))
    error(n, field(), "more than " + std::to_string(max_answers) + " answers");
  return out;
}

std::vector<dc_answers> loader::parse_dc_answers(const node& map, const std::string& field, dns::rr_type type,
                                                 const zone& z) {
  std::vector<dc_answers> out;
  node n = child(map, "answers");
  std::string f = join(field, "answers");
  if (!n) {
    error(map, f, "required field is missing (a map of DC name to its answers)");
    return out;
  }
  if (!is_map(n, f))
    return out;
  out.reserve(n.size());
  std::vector<std::string_view> seen; // views into the node table, alive while loading
  for (size_t i = 0; i < n.size(); ++i) {
    dc_answers d;
    const node k = n.key_at(i);
    const node v = n.value_at(i);
    if (!k.is_scalar()) {
      error(k, f, "expected a datacenter name as the key");
      continue;
    }
    const std::string_view name = k.scalar();
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      error(k, join(f, name), "duplicate key");
      continue;
    }
    seen.push_back(name);
    if (v.is_null()) {
      error(v, join(f, name), std::string(empty_value_message));
      continue;
    }
    auto dc = dc_index_.find(std::string(name));
    if (dc == dc_index_.end()) {
      error(k, join(f, name), "unknown datacenter '" + std::string(name) + "'");
      continue;
    }
    d.dc = static_cast<uint32_t>(dc->second);
    d.answers = parse_answers(v, f, name, type, z);
    if (d.answers.empty() && v.is_sequence() && v.size() == 0)
      error(v, join(f, name), "a DC needs at least one answer");
    out.push_back(std::move(d));
  }
  return out;
}

void loader::parse_dc_policy(const node& n, const std::string& field, record& r, const zone& z) {
  if (!is_map(n, field)) {
    r.dc->ranking = intern_ranking(dc_ranking{}); // never null, even in a model refused for this
    return;
  }
  static const auto dc_policy_keys = config_fields::keys_of("dc_policy");
  check_keys(n, field, dc_policy_keys);
  dc_policy& p = *r.dc;
  dc_ranking how; // interned at the end: records that rank alike share one
  if (auto ref = parse_metric_ref(n, field, true))
    how.select = *ref;
  if (node c = child(n, "criterion")) {
    if (auto crit = parse_criterion(c, join(field, "criterion")))
      how.rank = *crit;
  } else {
    // The natural direction of the metric: highest healthyBackends, lowest cpu.
    how.rank.kind = info(how.select.metric).direction == better::higher ? criterion_kind::highest : criterion_kind::lowest;
    if (how.select.rum == 2)
      how.rank.kind = criterion_kind::highest; // availability: more is better
  }
  if (node g = child(n, "gate")) {
    std::string gf = join(field, "gate");
    auto parse_gate = [&](const node& gn, const std::string& f) {
      if (!is_map(gn, f))
        return;
      check_keys(gn, f, config_fields::keys_of("gate"));
      gate gt;
      auto ref = parse_metric_ref(gn, f, true);
      node c = child(gn, "criterion");
      if (!c) {
        error(gn, join(f, "criterion"), "required field is missing");
        return;
      }
      auto crit = parse_criterion(c, join(f, "criterion"));
      if (ref && crit) {
        gt.ref = *ref;
        gt.test = *crit;
        if (crit->kind == criterion_kind::lowest || crit->kind == criterion_kind::highest)
          error(c, join(f, "criterion"), "a gate is a test: use {equals: T} or {within: ...}, not lowest/highest");
        else if (crit->target_is_best)
          error(c, join(f, "criterion"), "a gate cannot use target: best");
        else
          how.gates.push_back(gt);
      }
    };
    if (g.is_sequence())
      for (size_t i = 0; i < g.size(); ++i)
        parse_gate(g[i], gf + "[" + std::to_string(i) + "]");
    else
      parse_gate(g, gf);
  }
  // Real users' measurements (docs/rum.md): the steps of the rum: block.
  bool reads_rum = how.select.rum != 0;
  for (const auto& gt : how.gates)
    reads_rum = reads_rum || gt.ref.rum != 0;
  if (reads_rum) {
    parse_rum_steering(n, field, how.rum);
    if (node k = child(n, "rum"); k && k.is_map() && child(k, "keep_within"))
      error(child(k, "keep_within"), join(field, "rum.keep_within"),
            "DC mode keeps DCs near the best with criterion: {within: {target: best, margin: ...}}");
  }
  else if (child(n, "rum"))
    error(child(n, "rum"), join(field, "rum"), "rum: steps need metric rum_latency or rum_availability");
  if (node m = child(n, "switch_margin"))
    parse_margin(m, join(field, "switch_margin"), how.damping.margin, how.damping.margin_is_percent);
  if (auto v = duration(n, "hold_down", field, 0, 86'400'000))
    how.damping.hold_ms = *v;
  if (auto v = duration(n, "slow_start", field, 0, 86'400'000))
    how.slow_start_ms = *v;
  parse_protect(n, field, how.protect);
  if (how.damping.any() && how.rank.kind == criterion_kind::equals)
    error(child(n, how.damping.margin > 0 ? "switch_margin" : "hold_down"),
          join(field, how.damping.margin > 0 ? "switch_margin" : "hold_down"),
          "equals does not rank DCs: switch damping needs criterion lowest, highest or within");
  if (auto v = integer(n, "pick_dc_count", field, 1, max_answers))
    how.pick_dc_count = static_cast<int>(*v);
  if (auto b = parse_balance(n, field))
    p.balance = *b;
  p.answers = parse_dc_answers(n, field, r.type, z);
  p.fail_safe = parse_answer_list(n, "fail_safe", field, r.type, z);
  auto act = parse_all_down(n, field);
  p.on_all_down = act ? *act : (p.fail_safe.empty() ? all_down_action::fail_open : all_down_action::fail_safe);
  if (p.on_all_down == all_down_action::fail_safe && p.fail_safe.empty())
    error(n, join(field, "fail_safe"), "on_all_down: fail_safe needs fail_safe answers");
  if (const service* svc = how.select.src == source::service ? find_service(how.select.service) : nullptr) {
    const std::vector<bool>& has_data = dcs_with_data(*svc);
    for (const auto& d : p.answers)
      if (const std::string& dc = cfg_.datacenters[d.dc].name; !has_data[d.dc])
        warn(n, join(field, "answers." + dc),
             "service '" + svc->name + "' has no backends or lb_stats in DC '" + dc + "': it never has data there");
  }
  int worst = 0, dcs = 0;
  std::vector<int> per;
  for (const auto& d : p.answers)
    per.push_back(per_dc_max(p.balance, d.answers.size()));
  std::sort(per.rbegin(), per.rend());
  for (int v : per)
    if (dcs++ < how.pick_dc_count)
      worst += v;
  if (worst > max_answers)
    error(n, field, "this policy can return " + std::to_string(worst) + " answers; the limit is " +
                      std::to_string(max_answers));
  if (r.type == dns::rr_type::cname && worst > 1)
    error(n, field, "a CNAME record has exactly one answer: use pick_dc_count: 1 and a balance returning one answer");
  p.ranking = intern_ranking(std::move(how));
}

uint64_t loader::ranking_hash(const dc_ranking& k) noexcept {
  uint64_t h = std::hash<std::string>{}(k.select.service);
  h = h * 31 + (static_cast<uint64_t>(k.select.metric) << 8 | static_cast<uint64_t>(k.rank.kind));
  h = h * 31 + static_cast<uint64_t>(k.pick_dc_count) + (k.gates.size() << 16);
  return h * 31 + static_cast<uint64_t>(k.slow_start_ms + k.damping.hold_ms + k.protect.hold_ms);
}

std::shared_ptr<const dc_ranking> loader::intern_ranking(dc_ranking&& k) {
  const uint64_t h = ranking_hash(k);
  auto [first, last] = rankings_.equal_range(h);
  for (auto it = first; it != last; ++it)
    if (*it->second == k)
      return it->second;
  auto made = std::make_shared<const dc_ranking>(std::move(k));
  rankings_.emplace(h, made);
  return made;
}

const std::vector<bool>& loader::dcs_with_data(const service& svc) {
  const auto k = static_cast<size_t>(&svc - cfg_.services.data());
  if (service_dcs_.size() <= k)
    service_dcs_.resize(cfg_.services.size());
  std::vector<bool>& has = service_dcs_[k];
  if (has.size() != cfg_.datacenters.size()) {
    has.assign(cfg_.datacenters.size(), false);
    for (size_t dc = 0; dc < has.size(); ++dc)
      has[dc] = svc.backends.count(cfg_.datacenters[dc].name) || svc.lb_stats.count(cfg_.datacenters[dc].name);
  }
  return has;
}

void loader::parse_static_policy(const node& n, const std::string& field, record& r, const zone& z) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("static_policy"));
  static_policy& p = *r.static_rules;
  p.answers = parse_dc_answers(n, field, r.type, z);
  if (auto b = parse_balance(n, field))
    p.balance = *b;
  each(n, "rules", field, [&](const node& rn, const std::string& rf) {
    if (!is_map(rn, rf))
      return;
    check_keys(rn, rf, config_fields::keys_of("static_rule"));
    static_rule rule;
    for (auto& [s, sn] : str_list(rn, "subnet", rf)) {
      if (auto range = ip_range::parse(s))
        rule.subnets.push_back(*range);
      else
        error(sn, join(rf, "subnet"), "not a CIDR prefix or address range: '" + s + "'");
    }
    for (auto& [s, sn] : str_list(rn, "region", rf)) {
      if (auto code = parse_region(s))
        rule.regions.push_back(to_string(*code));
      else
        error(sn, join(rf, "region"), "unknown region '" + s + "'");
    }
    if (auto dc = str(rn, "dc", rf, true)) {
      rule.dc = *dc;
      bool found = std::any_of(p.answers.begin(), p.answers.end(),
                               [&](const dc_answers& a) { return cfg_.datacenters[a.dc].name == *dc; });
      if (!found)
        error(child(rn, "dc"), join(rf, "dc"), "DC '" + *dc + "' has no answers in " + join(field, "answers"));
    }
    p.rules.push_back(std::move(rule));
  });
  if (p.rules.empty())
    error(n, join(field, "rules"), "at least one rule is required");
}

void loader::parse_record(const node& n, const std::string& field, zone& z) {
  if (!is_map(n, field))
    return;
  static const auto record_keys = config_fields::keys_of("record");
  check_keys(n, field, record_keys);
  str(n, "generated_by", field); // who wrote it (external-dns): display only
  record r;
  r.where = where(n);
  if (auto v = str(n, "name", field, true)) {
    std::string name = *v == "@" ? z.name : v->ends_with(".") ? dns::canonical_text(*v)
                                                            : dns::canonical_text(*v + "." + z.name);
    auto wire = dns::text_to_wire(name);
    if (zone_wire_name_ != z.name) { // once per zone, not per record
      zone_wire_name_ = z.name;
      zone_wire_ = dns::text_to_wire(z.name);
    }
    const auto& zw = zone_wire_;
    if (!wire)
      error(child(n, "name"), join(field, "name"), "not a valid domain name: '" + *v + "'");
    else if (zw && !dns::is_at_or_below(*wire, *zw))
      error(child(n, "name"), join(field, "name"), "'" + name + "' is outside zone " + z.name);
    else if (misplaced_asterisk(*wire, true))
      error(child(n, "name"), join(field, "name"),
            "'" + *v + "': '*' is a wildcard only as the whole leftmost label ('*' or '*.sub'; RFC 4592 2.1)");
    r.name = name;
  }
  if (auto v = str(n, "type", field, true)) {
    auto t = dns::parse_rr_type(*v);
    using dns::rr_type;
    if (!t || *t == rr_type::any || *t == rr_type::opt)
      error(child(n, "type"), join(field, "type"),
            "unknown record type '" + *v + "' (allowed: A, AAAA, CNAME, MX, TXT, SRV, PTR, ALIAS)");
    else if (*t == rr_type::ns || *t == rr_type::soa)
      error(child(n, "type"), join(field, "type"), "SOA and NS come from the zone's soa and ns fields");
    else
      r.type = *t;
  }
  if (auto v = integer(n, "ttl", field, 0, 2147483647))
    r.ttl = static_cast<uint32_t>(*v);
  if (r.type == dns::rr_type::alias) {
    parse_alias_record(n, field, r, z);
    z.records.push_back(std::move(r));
    return;
  }
  // The keys the rest reads more than once, found in one pass: a big config
  // reads this 100,000 times, and a scan per question (target, monitor,
  // each mode twice) made loading 3-4 % slower as keys were added since
  // 0.1.0 (issue 42).
  node target_n, monitor_n, answers_n, dc_n, static_n, profile_n;
  for (size_t i = 0, size = n.size(); i < size; ++i) {
    const node k = n.key_at(i);
    if (!k.is_scalar())
      continue;
    const std::string_view key = k.scalar();
    node* slot = key == "answers" ? &answers_n : key == "dc" ? &dc_n : key == "profile" ? &profile_n
               : key == "static" ? &static_n : key == "target" ? &target_n : key == "monitor" ? &monitor_n : nullptr;
    if (slot && !*slot) // the first of a duplicated key, as child() finds it
      *slot = n.value_at(i);
  }
  if (target_n)
    error(target_n, join(field, "target"), "only an ALIAS record has a target (a CNAME's target is its answer)");
  if (monitor_n)
    error(monitor_n, join(field, "monitor"), "only an ALIAS record has a monitor (a profile's endpoints name their own)");
  if (auto v = integer(n, "min_ttl", field, 0, 2147483647)) {
    if (*v > r.ttl)
      error(child(n, "min_ttl"), join(field, "min_ttl"),
            "min_ttl " + std::to_string(*v) + " is above the record's ttl " + std::to_string(r.ttl));
    else if (!dc_n && !profile_n)
      error(child(n, "min_ttl"), join(field, "min_ttl"),
            "only a dc or profile record's answer depends on health; plain and static answers keep their ttl");
    else
      r.min_ttl = static_cast<uint32_t>(*v);
  }
  int modes = (answers_n ? 1 : 0) + (dc_n ? 1 : 0) + (static_n ? 1 : 0) + (profile_n ? 1 : 0);
  if (modes != 1) {
    error(n, field, "a record has exactly one of answers (plain), dc, static, profile");
  } else if (answers_n) {
    r.mode = record_mode::plain;
    r.plain = parse_answer_list(n, "answers", field, r.type, z);
    if (r.plain.empty())
      error(n, join(field, "answers"), "at least one answer is required");
    if (r.type == dns::rr_type::cname && r.plain.size() > 1)
      error(n, join(field, "answers"), "a CNAME record has exactly one answer");
  } else if (dc_n) {
    r.mode = record_mode::dc;
    r.dc = std::make_shared<dc_policy>();
    parse_dc_policy(dc_n, join(field, "dc"), r, z);
  } else if (static_n) {
    r.mode = record_mode::static_rules;
    r.static_rules = std::make_shared<static_policy>();
    parse_static_policy(static_n, join(field, "static"), r, z);
  } else {
    r.mode = record_mode::profile;
    // Required: `profile: ~` (or an anchored null, `profile: &a`) chose this
    // mode but names no profile; it reached compile_plan as profile "" and
    // a null dereference there (found by config_yaml_fuzz).
    if (auto v = str(n, "profile", field, true)) {
      r.profile = *v;
      if (!find_profile(*v))
        error(child(n, "profile"), join(field, "profile"), "unknown profile '" + *v + "'");
    }
  }
  z.records.push_back(std::move(r));
}

} // namespace gtmesh::config_loading
