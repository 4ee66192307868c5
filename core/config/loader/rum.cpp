// Real users' measurements (docs/rum.md): the `rum:` section and the
// steering blocks of profiles (`source: rum`) and DC-mode records.

#include "core/config/loader/loader.hpp"

namespace gtmesh::config_loading {

void loader::parse_rum(const node& n) {
  const std::string field = "rum";
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("rum"));
  rum_settings& r = cfg_.rum;
  r.where = where(n);
  if (auto v = integer(n, "ipv4_prefix", field, 8, 24))
    r.ipv4_prefix = static_cast<int>(*v);
  if (auto v = integer(n, "ipv6_prefix", field, 16, 56))
    r.ipv6_prefix = static_cast<int>(*v);
  if (auto v = duration(n, "window", field, 1000, 3'600'000))
    r.window_ms = *v;
  if (auto v = duration(n, "half_life", field, 1000, 7 * 86'400'000LL))
    r.half_life_ms = *v;
  if (auto v = duration(n, "max_age", field, 10'000, 30 * 86'400'000LL))
    r.max_age_ms = *v;
  if (auto v = integer(n, "max_cells", field, 1000, 100'000'000))
    r.max_cells = static_cast<uint32_t>(*v);
  // The --http listener reads at most 1 MiB of any body (config_api::max_body_bytes).
  if (auto v = integer(n, "max_body", field, 1024, 1 << 20))
    r.max_body_bytes = static_cast<uint32_t>(*v);
  if (auto v = integer(n, "rate_per_address", field, 1, 10'000'000))
    r.rate_per_address = static_cast<uint32_t>(*v);
  if (auto v = integer(n, "burst", field, 1, 100'000'000))
    r.burst = static_cast<uint32_t>(*v);
  if (auto v = str(n, "join", field)) {
    const std::string name = v->ends_with(".") ? dns::canonical_text(*v) : dns::canonical_text(*v + ".");
    if (v->empty() || name.find('*') != std::string::npos || name == "." || !dns::text_to_wire(name))
      error(child(n, "join"), join(field, "join"),
            "a domain name in one of the config's zones, without '*' (labels of 1..63 characters), got '" + *v + "'");
    else
      r.join = name;
  }
  if (r.burst < r.rate_per_address && child(n, "burst"))
    error(child(n, "burst"), join(field, "burst"), "below rate_per_address: one second's beacons would not fit");
  if (!child(n, "apps"))
    error(n, join(field, "apps"), "required field is missing (at least one app with its keys)");
  each(n, "apps", field, [&](const node& an, const std::string& af) {
    if (!is_map(an, af))
      return;
    check_keys(an, af, config_fields::keys_of("rum_app"));
    rum_app_settings a;
    a.where = where(an);
    if (auto v = str(an, "name", af, true))
      a.name = *v;
    if (a.name.empty() || a.name.size() > 64 || a.name.find_first_of(" \t/\"") != std::string::npos)
      error(child(an, "name") ? child(an, "name") : an, join(af, "name"),
            "an app name is 1..64 characters without spaces, quotes or '/'");
    for (const auto& other : r.apps)
      if (other.name == a.name)
        error(child(an, "name"), join(af, "name"), "duplicate app '" + a.name + "'");
    for (auto& [k, kn] : str_list(an, "keys", af)) {
      if (k.size() < 16)
        error(kn, join(af, "keys"), "a key has at least 16 characters (it is all a beacon's sender proves)");
      for (const auto& other : r.apps)
        for (const auto& ok : other.keys)
          if (ok == k)
            error(kn, join(af, "keys"), "this key is already app '" + other.name + "''s");
      a.keys.push_back(k);
    }
    if (a.keys.empty() && child(an, "keys"))
      error(child(an, "keys"), join(af, "keys"), "at least one key is required");
    else if (a.keys.empty())
      error(an, join(af, "keys"), "required field is missing");
    for (auto& [o, on] : str_list(an, "origins", af)) {
      const bool web = (o.starts_with("https://") || o.starts_with("http://")) && o.find('/', 8) == std::string::npos;
      if (!web)
        error(on, join(af, "origins"), "an origin is scheme://host[:port], no path: '" + o + "'");
      a.origins.push_back(o);
    }
    each(an, "measure", af, [&](const node& mn, const std::string& mf) {
      if (!is_map(mn, mf))
        return;
      check_keys(mn, mf, config_fields::keys_of("rum_measure"));
      rum_app_settings::measure m;
      if (auto v = str(mn, "job", mf, true))
        m.job = *v;
      if (auto v = str(mn, "url", mf, true)) {
        m.url = *v;
        if (!m.url.starts_with("http://") && !m.url.starts_with("https://"))
          error(child(mn, "url"), join(mf, "url"), "an http:// or https:// URL, got '" + m.url + "'");
      }
      a.measures.push_back(std::move(m));
    });
    r.apps.push_back(std::move(a));
  });
}

void loader::check_rum_join() {
  // rum.join: below a zone's apex, and no record at or below it (the
  // responders answer its children themselves: NODATA, noted).
  const std::string& j = cfg_.rum.join;
  if (j.empty())
    return;
  const std::string f = "rum.join";
  const zone* in = nullptr;
  for (const auto& z : cfg_.zones)
    if (j.size() > z.name.size() && j.ends_with("." + z.name) && (!in || z.name.size() > in->name.size()))
      in = &z;
  if (!in) {
    error_at(cfg_.rum.where, f, "'" + j + "' is not below the apex of any zone of this config");
    return;
  }
  for (const auto& rec : in->records) {
    if (rec.name == j || rec.name.ends_with("." + j))
      error_at(rec.where, f, "'" + rec.name + "' is at or below rum.join '" + j +
                               "': the join's names are answered by the responders (NODATA), not by records");
    // A wildcard above the join would answer its page views' names itself.
    else if (rec.name.starts_with("*.") && j.ends_with(rec.name.substr(1)))
      error_at(rec.where, f, "the wildcard '" + rec.name + "' would answer the names under rum.join '" + j +
                               "' (the resolver join never sees them): move the join or the wildcard");
  }
}

void loader::check_rum_jobs() {
  // A job names a profile endpoint or a DC of this config.
  for (const auto& a : cfg_.rum.apps)
    for (size_t i = 0; i < a.measures.size(); ++i) {
      const std::string& job = a.measures[i].job;
      const std::string f = "rum.apps[" + a.name + "].measure[" + std::to_string(i) + "].job";
      const size_t slash = job.find('/');
      bool known = false;
      if (slash != std::string::npos) {
        const std::string left = job.substr(0, slash), right = job.substr(slash + 1);
        if (left == "dc")
          known = find_dc(right) != nullptr;
        if (!known)
          if (const profile* p = find_profile(left))
            for (const auto& e : p->endpoints)
              known = known || e.name == right;
      }
      if (!known)
        error_at(a.where, f, "'" + job + "' is no profile endpoint (PROFILE/ENDPOINT) or DC (dc/NAME) of this config");
    }
}

void loader::parse_rum_steering(const node& map, const std::string& field, rum_steering& out) {
  out.enabled = true;
  node n = child(map, "rum");
  if (!n || n.is_null())
    return;
  const std::string f = join(field, "rum");
  if (!is_map(n, f))
    return;
  check_keys(n, f, config_fields::keys_of("rum_steering"));
  if (auto v = integer(n, "min_samples", f, 1, 1'000'000))
    out.min_samples = static_cast<uint32_t>(*v);
  if (node k = child(n, "keep_within"))
    parse_margin(k, join(f, "keep_within"), out.keep_within, out.keep_within_percent);
  if (node t = child(n, "availability_threshold")) {
    double v = 0;
    bool pct = false;
    if (parse_margin(t, join(f, "availability_threshold"), v, pct)) {
      if (pct)
        v /= 100;
      if (v > 1)
        error(t, join(f, "availability_threshold"), "a share: 0..1 or 0%..100%");
      else
        out.availability_threshold = v;
    }
  }
  if (auto v = str(n, "statistic", f)) {
    if (*v == "p50" || *v == "p90")
      out.p90 = *v == "p90";
    else
      error(child(n, "statistic"), join(f, "statistic"), "p50 or p90, got '" + *v + "'");
  }
}

} // namespace gtmesh::config_loading
