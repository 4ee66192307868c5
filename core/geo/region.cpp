#include "core/geo/region.hpp"

#include <cctype>
#include <cstring>

namespace gtmesh {

namespace {

// ISO 3166-1 alpha-2, officially assigned codes plus XK (Kosovo, used by
// MaxMind and DB-IP).
constexpr std::string_view countries =
  "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW "
  "BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI "
  "FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN "
  "IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME "
  "MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF "
  "PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV "
  "SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE "
  "YT ZA ZM ZW XK";

// ISO 3166-2 subdivisions for the three countries that support them.
constexpr std::string_view us_states =
  "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH "
  "OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR UM VI";
constexpr std::string_view ca_provinces = "AB BC MB NB NL NS NT NU ON PE QC SK YT";
constexpr std::string_view au_states = "ACT NSW NT QLD SA TAS VIC WA";

constexpr std::string_view groupings =
  "GEO-AF (Africa), GEO-AN (Antarctica), GEO-AS (Asia), GEO-AP (Australia/Pacific), GEO-EU (Europe), "
  "GEO-ME (Middle East), GEO-NA (North America), GEO-SA (South America)";

// Countries of the Middle East grouping (geographically in Asia).
constexpr std::string_view middle_east = "AE BH IL IQ IR JO KW LB OM PS QA SA SY YE";

bool in_list(std::string_view list, std::string_view code) {
  size_t pos = 0;
  while (pos < list.size()) {
    size_t sp = list.find(' ', pos);
    if (sp == std::string_view::npos)
      sp = list.size();
    if (list.substr(pos, sp - pos) == code)
      return true;
    pos = sp + 1;
  }
  return false;
}

} // namespace

region_code pack_region(std::string_view upper_text) noexcept {
  region_code code = 0;
  for (size_t i = 0; i < upper_text.size() && i < 8; ++i)
    code |= static_cast<region_code>(static_cast<uint8_t>(upper_text[i])) << (8 * i);
  return code;
}

std::string to_string(region_code code) {
  std::string out;
  for (int i = 0; i < 8; ++i) {
    char c = static_cast<char>((code >> (8 * i)) & 0xff);
    if (c == 0)
      break;
    out.push_back(c);
  }
  return out;
}

std::optional<region_code> parse_region(std::string_view text) {
  if (text.empty() || text.size() > 8)
    return std::nullopt;
  char up[8];
  for (size_t i = 0; i < text.size(); ++i)
    up[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  std::string_view u(up, text.size());
  if (u == "WORLD")
    return pack_region(u);
  if (u.starts_with("GEO-")) {
    static constexpr std::string_view known[] = {"GEO-AF", "GEO-AN", "GEO-AS", "GEO-AP",
                                                 "GEO-EU", "GEO-ME", "GEO-NA", "GEO-SA"};
    for (auto k : known)
      if (u == k)
        return pack_region(u);
    return std::nullopt;
  }
  if (u.size() == 2)
    return in_list(countries, u) ? std::optional(pack_region(u)) : std::nullopt;
  if (u.size() >= 4 && u[2] == '-') {
    auto country = u.substr(0, 2);
    auto sub = u.substr(3);
    std::string_view list = country == "US" ? us_states : country == "CA" ? ca_provinces
                          : country == "AU" ? au_states : std::string_view{};
    if (!list.empty() && in_list(list, sub))
      return pack_region(u);
  }
  return std::nullopt;
}

region_level level_of(region_code code) {
  std::string s = to_string(code);
  if (s == "WORLD")
    return region_level::world;
  if (s.starts_with("GEO-"))
    return region_level::grouping;
  if (s.size() == 2)
    return region_level::country;
  return region_level::subdivision;
}

region_code grouping_of(std::string_view country, std::string_view continent) noexcept {
  if (country.size() == 2 && in_list(middle_east, country))
    return pack_region("GEO-ME");
  if (continent == "AF")
    return pack_region("GEO-AF");
  if (continent == "AN")
    return pack_region("GEO-AN");
  if (continent == "AS")
    return pack_region("GEO-AS");
  if (continent == "OC")
    return pack_region("GEO-AP");
  if (continent == "EU")
    return pack_region("GEO-EU");
  if (continent == "NA")
    return pack_region("GEO-NA");
  if (continent == "SA")
    return pack_region("GEO-SA");
  return 0;
}

std::string_view region_groupings() noexcept {
  return groupings;
}

} // namespace gtmesh
