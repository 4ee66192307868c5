#pragma once

// Text from the network or a peer on its way to a screen: status, logs, the
// console. A peer must not be able to write a line of its own (a newline) or
// drive the terminal (escape sequences), so every C0 and C1 control
// character and DEL becomes '?', invalid UTF-8 bytes too, and the text is
// cut at `max_bytes` (on a character boundary). `keep_newlines` keeps '\n'
// for our own multi-line reports (a log line's message); text from a peer
// never keeps them.

#include <string>
#include <string_view>

namespace gtmesh {

std::string display_text(std::string_view text, size_t max_bytes = 1024, bool keep_newlines = false);

} // namespace gtmesh
