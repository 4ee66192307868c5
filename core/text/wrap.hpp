#pragma once

// Operator text that fits a terminal: lines longer than `width` are broken
// at spaces, continuation lines indented 4 past the line's own indentation.

#include <string>
#include <string_view>

namespace gtmesh {

inline constexpr size_t terminal_width = 100;

std::string wrap_lines(std::string_view text, size_t width = terminal_width);

} // namespace gtmesh
