#include "core/rum/beacon_parse.hpp"

#include <simdjson.h>

#include <charconv>
#include <deque>

namespace gtmesh::rum {

namespace dom = simdjson::dom;

struct beacon_parser::impl {
  dom::parser parser;
  std::deque<std::string> kept; ///< strings of NDJSON documents (their buffers are reused)
  bool keep_strings = false;

  std::string_view keep(std::string_view s) {
    if (!keep_strings || s.empty())
      return s;
    kept.emplace_back(s);
    return kept.back();
  }
};

namespace {

/// A field by its lowerCamelCase or its snake_case name (protobuf's JSON
/// parsers take both).
struct opt_el {
  dom::element e;
  bool has = false;
};

opt_el field(dom::object o, std::string_view camel, std::string_view snake = {}) {
  opt_el r;
  if (o.at_key(camel).get(r.e) == simdjson::SUCCESS)
    r.has = true;
  else if (!snake.empty() && o.at_key(snake).get(r.e) == simdjson::SUCCESS)
    r.has = true;
  return r;
}

/// There and not null (protobuf's JSON mapping: null is the default).
bool present(const opt_el& o) {
  return o.has && o.e.type() != dom::element_type::NULL_VALUE;
}

/// Where a value is, rendered only for an error message (building the
/// path of every field would cost more than the parse).
struct loc {
  const loc* up = nullptr;
  std::string_view name;
  long index = -1;
  loc(std::string_view n) : name(n) {}
  loc(const loc& parent, std::string_view n, long i = -1) : up(&parent), name(n), index(i) {}
  std::string text() const {
    std::string s = up ? up->text() : std::string();
    if (!name.empty()) {
      if (!s.empty() && name[0] != '[')
        s += '.';
      s += name;
    }
    if (index >= 0)
      s += "[" + std::to_string(index) + "]";
    return s;
  }
};

struct reader {
  std::string& error;

  bool fail(const loc& where, const std::string& what) {
    error = where.text() + ": " + what;
    return false;
  }
  /// An integer as a JSON number or a decimal string (protobuf's mapping).
  bool integer(const opt_el& oe, const loc& where, int64_t lo, int64_t hi, int64_t& out) {
    if (!present(oe))
      return true;
    const dom::element e = oe.e;
    int64_t v = 0;
    if (e.is_int64()) {
      v = int64_t(e);
    } else if (e.is_uint64()) {
      uint64_t u = uint64_t(e);
      if (u > static_cast<uint64_t>(hi))
        return fail(where, "out of range");
      v = static_cast<int64_t>(u);
    } else if (e.is_double()) {
      double d = double(e);
      if (!(d == std::floor(d)) || d < static_cast<double>(lo) || d > static_cast<double>(hi))
        return fail(where, "not an integer in range");
      v = static_cast<int64_t>(d);
    } else if (e.is_string()) {
      std::string_view s = std::string_view(e);
      auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (r.ec != std::errc() || r.ptr != s.data() + s.size())
        return fail(where, "not an integer");
    } else {
      return fail(where, "not an integer");
    }
    if (v < lo || v > hi)
      return fail(where, "out of range");
    out = v;
    return true;
  }
  bool u64(const opt_el& oe, const loc& where, uint64_t& out) {
    if (!present(oe))
      return true;
    const dom::element e = oe.e;
    if (e.is_uint64()) {
      out = uint64_t(e);
      return true;
    }
    if (e.is_int64()) {
      if (int64_t(e) < 0)
        return fail(where, "negative");
      out = static_cast<uint64_t>(int64_t(e));
      return true;
    }
    if (e.is_string()) {
      std::string_view s = std::string_view(e);
      auto r = std::from_chars(s.data(), s.data() + s.size(), out);
      if (r.ec != std::errc() || r.ptr != s.data() + s.size())
        return fail(where, "not an unsigned integer");
      return true;
    }
    if (e.is_double()) {
      double d = double(e);
      if (d < 0 || d != std::floor(d) || d > 1.8e19)
        return fail(where, "not an unsigned integer");
      out = static_cast<uint64_t>(d);
      return true;
    }
    return fail(where, "not an unsigned integer");
  }
  bool number(const opt_el& oe, const loc& where, double& out) {
    if (!present(oe))
      return true;
    const dom::element e = oe.e;
    if (e.is_number()) {
      out = double(e);
      return true;
    }
    if (e.is_string()) { // "NaN", "Infinity" or a decimal string
      std::string_view s = std::string_view(e);
      double v = 0;
      auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (r.ec != std::errc() || r.ptr != s.data() + s.size())
        return fail(where, "not a number");
      out = v;
      return true;
    }
    return fail(where, "not a number");
  }
  bool text(const opt_el& oe, const loc& where, std::string_view& out) {
    if (!present(oe))
      return true;
    const dom::element e = oe.e;
    if (!e.is_string())
      return fail(where, "not a string");
    out = std::string_view(e);
    return true;
  }
  bool boolean(const opt_el& oe, const loc& where, bool& out) {
    if (!present(oe))
      return true;
    const dom::element e = oe.e;
    if (!e.is_bool())
      return fail(where, "not true or false");
    out = bool(e);
    return true;
  }
  bool object(const opt_el& oe, const loc& where, dom::object& out, bool& has) {
    has = false;
    if (!present(oe))
      return true;
    const dom::element e = oe.e;
    if (!e.is_object())
      return fail(where, "not an object");
    out = dom::object(e);
    has = true;
    return true;
  }
  bool array(const opt_el& oe, const loc& where, dom::array& out, bool& has) {
    has = false;
    if (!present(oe))
      return true;
    const dom::element e = oe.e;
    if (!e.is_array())
      return fail(where, "not a list");
    out = dom::array(e);
    has = true;
    return true;
  }
};

struct attribution {
  std::string_view job, ip, country, subdiv;
  int32_t asn = 0;
  bool given = false;
};

bool read_attribution(reader& r, dom::object o, const loc& at, attribution& a) {
  a.given = true;
  if (!r.text(field(o, "jobid"), loc(at, "jobid"), a.job))
    return false;
  dom::object where;
  bool has = false;
  if (!r.object(field(o, "location"), loc(at, "location"), where, has))
    return false;
  if (has) {
    int64_t asn = 0;
    if (!r.text(field(where, "ipAddress", "ip_address"), loc(at, "location.ipAddress"), a.ip) ||
        !r.text(field(where, "geoCountry", "geo_country"), loc(at, "location.geoCountry"), a.country) ||
        !r.text(field(where, "geoSubdiv", "geo_subdiv"), loc(at, "location.geoSubdiv"), a.subdiv) ||
        !r.integer(field(where, "asn"), loc(at, "location.asn"), INT32_MIN, INT32_MAX, asn))
      return false;
    a.asn = static_cast<int32_t>(asn);
  }
  opt_el device = field(o, "deviceType", "device_type");
  if (present(device) && !device.e.is_string() && !device.e.is_int64())
    return r.fail(loc(at, "deviceType"), "not a device type");
  return true;
}

bool read_beacon(reader& r, beacon_parser::impl& p, dom::object b, const loc& at,
                 std::vector<beacon_sample>& out) {
  std::string_view app;
  if (!r.text(field(b, "appid"), loc(at, "appid"), app))
    return false;
  app = p.keep(app);
  opt_el sig = field(b, "signature");
  if (present(sig) && !sig.e.is_string())
    return r.fail(loc(at, "signature"), "not a string (bytes are base64 text)");
  dom::array ms;
  bool has = false;
  if (!r.array(field(b, "measurements"), loc(at, "measurements"), ms, has))
    return false;
  if (!has)
    return true;
  size_t mi = 0;
  for (dom::element me : ms) {
    const loc mat(at, "measurements", static_cast<long>(mi++));
    if (!me.is_object())
      return r.fail(mat, "not an object");
    dom::object m = dom::object(me);
    attribution top;
    dom::object ao;
    if (!r.object(field(m, "attribution"), loc(mat, "attribution"), ao, has))
      return false;
    if (has && !read_attribution(r, ao, loc(mat, "attribution"), top))
      return false;
    std::string_view view_id;
    if (!r.text(field(m, "gtmeshViewId", "gtmesh_view_id"), loc(mat, "gtmeshViewId"), view_id))
      return false;
    view_id = p.keep(view_id);
    dom::array ps;
    if (!r.array(field(m, "payloads"), loc(mat, "payloads"), ps, has))
      return false;
    if (!has)
      continue;
    size_t pi = 0;
    for (dom::element pe : ps) {
      const loc pat(mat, "payloads", static_cast<long>(pi++));
      if (!pe.is_object())
        return r.fail(pat, "not an object");
      dom::object pl = dom::object(pe);
      beacon_sample base;
      base.app = app;
      base.view_id = view_id;
      int64_t version = 0, status = 0, ttl = 0;
      if (!r.integer(field(pl, "version"), loc(pat, "version"), INT32_MIN, INT32_MAX, version) ||
          !r.u64(field(pl, "timstampEpochNs", "timstamp_epoch_ns"), loc(pat, "timstampEpochNs"), base.timestamp_ns) ||
          !r.integer(field(pl, "statusCode", "status_code"), loc(pat, "statusCode"), INT32_MIN, INT32_MAX, status) ||
          !r.integer(field(pl, "dataTtl", "data_ttl"), loc(pat, "dataTtl"), INT32_MIN, INT32_MAX, ttl))
        return false;
      base.status_code = static_cast<int32_t>(status);
      base.data_ttl_s = static_cast<int32_t>(ttl);
      attribution own = top;
      dom::object pao;
      if (!r.object(field(pl, "attribution"), loc(pat, "attribution"), pao, has))
        return false;
      if (has) {
        own = attribution{};
        if (!read_attribution(r, pao, loc(pat, "attribution"), own))
          return false;
      }
      base.job = p.keep(own.job);
      base.ip = p.keep(own.ip);
      base.country = p.keep(own.country);
      base.subdiv = p.keep(own.subdiv);
      base.asn = own.asn;
      dom::array data;
      if (!r.array(field(pl, "data"), loc(pat, "data"), data, has))
        return false;
      if (!has || data.size() == 0) { // a status code alone still says up or down
        if (base.status_code != 0)
          out.push_back(base);
        continue;
      }
      size_t di = 0;
      for (dom::element de : data) {
        const loc dat(pat, "data", static_cast<long>(di++));
        if (!de.is_object())
          return r.fail(dat, "not an object");
        dom::object d = dom::object(de);
        beacon_sample s = base;
        dom::object v;
        bool got = false;
        if (!r.object(field(d, "simpleLatency", "simple_latency"), loc(dat, "simpleLatency"), v, has))
          return false;
        if (has) {
          int64_t ms = 0;
          if (!r.integer(field(v, "valueMs", "value_ms"), loc(dat, "simpleLatency.valueMs"), INT32_MIN, INT32_MAX, ms))
            return false;
          s.latency_ms = static_cast<double>(ms);
          got = true;
        }
        if (!r.object(field(d, "detailedPerformance", "detailed_performance"), loc(dat, "detailedPerformance"), v, has))
          return false;
        if (has) {
          int64_t ttfb = 0, ttlb = 0, other = 0;
          const loc dp(dat, "detailedPerformance");
          if (!r.integer(field(v, "timeToFirstByteMs", "time_to_first_byte_ms"), loc(dp, "timeToFirstByteMs"), INT32_MIN,
                         INT32_MAX, ttfb) ||
              !r.integer(field(v, "timeToLastByteMs", "time_to_last_byte_ms"), loc(dp, "timeToLastByteMs"), INT32_MIN,
                         INT32_MAX, ttlb) ||
              !r.integer(field(v, "dnsLookupMs", "dns_lookup_ms"), loc(dp, "dnsLookupMs"), INT32_MIN, INT32_MAX, other) ||
              !r.integer(field(v, "transportConnectMs", "transport_connect_ms"), loc(dp, "transportConnectMs"), INT32_MIN,
                         INT32_MAX, other) ||
              !r.integer(field(v, "tlsConnectMs", "tls_connect_ms"), loc(dp, "tlsConnectMs"), INT32_MIN, INT32_MAX,
                         other) ||
              !r.integer(field(v, "waitingMs", "waiting_ms"), loc(dp, "waitingMs"), INT32_MIN, INT32_MAX, other))
            return false;
          if (ttfb == 0 && ttlb == 0)
            return r.fail(dp, "one of timeToFirstByteMs and timeToLastByteMs is required");
          s.latency_ms = static_cast<double>(ttfb != 0 ? ttfb : ttlb);
          got = true;
        }
        if (!r.object(field(d, "availability"), loc(dat, "availability"), v, has))
          return false;
        if (has) {
          bool up = false;
          int64_t code = 0;
          if (!r.boolean(field(v, "up"), loc(dat, "availability.up"), up) ||
              !r.integer(field(v, "statusCode", "status_code"), loc(dat, "availability.statusCode"), INT32_MIN,
                         INT32_MAX, code))
            return false;
          s.availability = up ? 1 : 0;
          if (code != 0)
            s.status_code = static_cast<int32_t>(code);
          got = true;
        }
        if (!r.object(field(d, "score"), loc(dat, "score"), v, has))
          return false;
        if (has && !got) {
          double score = 0;
          if (!r.number(field(v, "value"), loc(dat, "score.value"), score))
            return false;
          s.score_only = true;
          got = true;
        }
        if (!got)
          return r.fail(dat, "none of simpleLatency, detailedPerformance, score, availability");
        out.push_back(s);
      }
    }
  }
  return true;
}

/// A Beacons object, or a single Beacon (an NDJSON line may hold either).
bool read_document(reader& r, beacon_parser::impl& p, dom::element doc, const loc& at,
                   std::vector<beacon_sample>& out) {
  if (!doc.is_object())
    return r.fail(at, "not an object (a Beacons message)");
  dom::object o = dom::object(doc);
  dom::array bs;
  bool has = false;
  if (!r.array(field(o, "beacons"), loc(at, "beacons"), bs, has))
    return false;
  if (!has) {
    dom::element probe;
    if (o.at_key("appid").get(probe) == simdjson::SUCCESS || o.at_key("measurements").get(probe) == simdjson::SUCCESS)
      return read_beacon(r, p, o, loc(at, "beacon"), out);
    return r.fail(loc(at, "body"), "no beacons");
  }
  size_t i = 0;
  for (dom::element be : bs) {
    const loc bat(at, "beacons", static_cast<long>(i++));
    if (!be.is_object())
      return r.fail(bat, "not an object");
    if (!read_beacon(r, p, dom::object(be), bat, out))
      return false;
  }
  return true;
}

} // namespace

beacon_parser::beacon_parser() : impl_(std::make_unique<impl>()) {}
beacon_parser::~beacon_parser() = default;

bool beacon_parser::parse_beacons(std::string_view body, std::vector<beacon_sample>& out, std::string& error) {
  out.clear();
  impl_->kept.clear();
  impl_->keep_strings = false;
  reader r{error};
  dom::element doc;
  auto err = impl_->parser.parse(body.data(), body.size(), true).get(doc);
  if (err == simdjson::SUCCESS) {
    if (!read_document(r, *impl_, doc, loc(""), out)) {
      out.clear();
      return false;
    }
    return true;
  }
  if (err != simdjson::TAPE_ERROR && err != simdjson::TRAILING_CONTENT) {
    error = std::string("body: not JSON (") + simdjson::error_message(err) + ")";
    return false;
  }
  // NDJSON: one document per line; their strings are copied (the parser
  // reuses its buffers from line to line).
  impl_->keep_strings = true;
  size_t line = 0, start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string_view::npos)
      end = body.size();
    std::string_view text = body.substr(start, end - start);
    start = end + 1;
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string_view::npos)
      continue;
    if (impl_->parser.parse(text.data(), text.size(), true).get(doc) != simdjson::SUCCESS) {
      error = "body: line " + std::to_string(line) + ": not JSON";
      out.clear();
      return false;
    }
    const std::string where = "line " + std::to_string(line) + ":";
    if (!read_document(r, *impl_, doc, loc(where), out)) {
      out.clear();
      return false;
    }
  }
  return true;
}

bool beacon_parser::parse_nel(std::string_view body, std::vector<nel_report>& out, std::string& error) {
  out.clear();
  reader r{error};
  dom::element doc;
  auto err = impl_->parser.parse(body.data(), body.size(), true).get(doc);
  if (err != simdjson::SUCCESS) {
    error = std::string("body: not JSON (") + simdjson::error_message(err) + ")";
    return false;
  }
  auto one = [&](dom::element e, const loc& at) -> bool {
    if (!e.is_object())
      return r.fail(at, "not an object");
    dom::object o = dom::object(e);
    std::string_view type;
    if (!r.text(field(o, "type"), loc(at, "type"), type))
      return false;
    if (type != "network-error")
      return true; // other report types (csp, deprecation) share the endpoint
    nel_report n;
    if (!r.integer(field(o, "age"), loc(at, "age"), 0, INT64_MAX, n.age_ms))
      return false;
    dom::object b;
    bool has = false;
    if (!r.object(field(o, "body"), loc(at, "body"), b, has))
      return false;
    if (!has)
      return r.fail(loc(at, "body"), "missing");
    int64_t status = 0;
    double elapsed = NAN;
    if (!r.text(field(b, "type"), loc(at, "body.type"), n.type) || !r.text(field(b, "phase"), loc(at, "body.phase"), n.phase) ||
        !r.text(field(b, "server_ip"), loc(at, "body.server_ip"), n.server_ip) ||
        !r.number(field(b, "elapsed_time"), loc(at, "body.elapsed_time"), elapsed) ||
        !r.number(field(b, "sampling_fraction"), loc(at, "body.sampling_fraction"), n.sampling_fraction) ||
        !r.integer(field(b, "status_code"), loc(at, "body.status_code"), 0, 999, status))
      return false;
    if (n.type.empty())
      return r.fail(loc(at, "body.type"), "missing");
    n.elapsed_ms = elapsed;
    n.status_code = static_cast<int32_t>(status);
    out.push_back(n);
    return true;
  };
  if (doc.is_array()) {
    size_t i = 0;
    for (dom::element e : dom::array(doc))
      if (!one(e, loc(loc("reports"), "", static_cast<long>(i++)))) {
        out.clear();
        return false;
      }
    return true;
  }
  if (!one(doc, loc("report"))) {
    out.clear();
    return false;
  }
  return true;
}

} // namespace gtmesh::rum
