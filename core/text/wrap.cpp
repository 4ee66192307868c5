#include "core/text/wrap.hpp"

namespace gtmesh {

namespace {

constexpr auto npos = std::string_view::npos;

void wrap_one(std::string_view line, size_t width, std::string& out) {
  const size_t indent = std::min(line.find_first_not_of(' '), line.size());
  const std::string more(indent + 4, ' ');
  bool first = true;
  for (;;) {
    const size_t lead = first ? 0 : more.size();
    if (!first)
      out += more;
    if (line.size() + lead <= width) {
      out += line;
      return;
    }
    size_t cut = line.rfind(' ', width - lead);
    if (cut == npos || cut <= (first ? indent : 0))
      cut = line.find(' ', width - lead); // one long word: break after it
    if (cut == npos) {
      out += line;
      return;
    }
    out += line.substr(0, cut);
    out += '\n';
    line = line.substr(cut + 1);
    line = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    first = false;
    if (line.empty())
      return;
  }
}

} // namespace

std::string wrap_lines(std::string_view text, size_t width) {
  std::string out;
  size_t start = 0;
  for (;;) {
    size_t eol = text.find('\n', start);
    wrap_one(text.substr(start, eol == npos ? npos : eol - start), width, out);
    if (eol == npos)
      return out;
    out += '\n';
    start = eol + 1;
  }
}

} // namespace gtmesh
