#include "core/text/iso_time.hpp"

#include <chrono>
#include <cstdio>

namespace gtmesh {

namespace {

using namespace std::chrono;

bool digits(std::string_view s, size_t at, size_t n, int& out) {
  if (at + n > s.size())
    return false;
  out = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

} // namespace

int64_t unix_now_ms() {
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string iso8601_utc(int64_t unix_ms) {
  sys_time<milliseconds> t{milliseconds(unix_ms)};
  auto day = floor<days>(t);
  year_month_day ymd{day};
  hh_mm_ss<milliseconds> hms{t - day};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()), static_cast<int>(hms.subseconds().count()));
  return buf;
}

std::optional<int64_t> parse_iso8601_utc(std::string_view s) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, ms = 0;
  if (!digits(s, 0, 4, y) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d))
    return std::nullopt;
  size_t at = 10;
  if (at < s.size()) {
    if ((s[at] != 'T' && s[at] != ' ') || !digits(s, at + 1, 2, h) || s.size() < at + 9 || s[at + 3] != ':' ||
        !digits(s, at + 4, 2, mi) || s[at + 6] != ':' || !digits(s, at + 7, 2, sec))
      return std::nullopt;
    at += 9;
    if (at < s.size() && s[at] == '.') {
      size_t n = 0;
      int frac = 0;
      for (++at; at < s.size() && s[at] >= '0' && s[at] <= '9'; ++at, ++n)
        if (n < 3)
          frac = frac * 10 + (s[at] - '0');
      if (n == 0)
        return std::nullopt;
      for (; n < 3; ++n)
        frac *= 10;
      ms = frac;
    }
    std::string_view zone = s.substr(at);
    if (!(zone.empty() || zone == "Z" || zone == "+00:00"))
      return std::nullopt;
  }
  year_month_day ymd{year(y), month(static_cast<unsigned>(mo)), day(static_cast<unsigned>(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 60)
    return std::nullopt;
  auto t = sys_days(ymd) + hours(h) + minutes(mi) + seconds(sec) + milliseconds(ms);
  return duration_cast<milliseconds>(t.time_since_epoch()).count();
}

} // namespace gtmesh
