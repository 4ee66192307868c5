#pragma once

// Whole files written so that a reader, a crash or a power cut sees the old
// file or the new one, never a part: a temporary file beside it, synced,
// renamed over it, the folder synced. For files an operator keeps (a
// backup), and the marks a decider leaves in its data folder.

#include <cstddef>
#include <string>
#include <string_view>

namespace gtmesh {

/// False with the reason (errno's text, and which step) on failure; the
/// old file, if any, is then untouched.
bool write_file_durably(const std::string& path, std::string_view bytes, std::string& error);

/// The whole file, at most `max_bytes` (a larger one is an error, never
/// read into memory).
bool read_whole_file(const std::string& path, size_t max_bytes, std::string& out, std::string& error);

} // namespace gtmesh
