#pragma once

// Config texts travel compressed (zstd) between nodes and in the replicated
// log. A 100,000-record config is 35 MB of YAML but about 1 MB compressed,
// so it fits one mesh frame (16 MiB), one Raft RPC and one RocksDB entry
// without chunking, and a push to ten nodes moves a thirtieth of the bytes.
//
// On the wire a config text is a pair of fields: `y` (the text itself, for
// texts up to compress_above_bytes) or `yz` (one zstd frame that records its
// size). Exactly one of them is set; an empty text is an empty `y`.

#include <cstddef>
#include <string>
#include <string_view>

namespace gtmesh::mesh {

/// Texts up to this size travel as they are (readable in a packet dump).
inline constexpr size_t compress_above_bytes = 64 * 1024;
/// The most a config may take compressed, in a push and as a log entry: a
/// Raft entry must fit one RPC (consensus/raft_node.hpp), which must fit one
/// 16 MiB frame.
inline constexpr size_t max_compressed_config_bytes = 12 * 1024 * 1024;
/// The largest text a compressed field may expand to: the loader's limit
/// (config::max_config_bytes), so a small frame cannot claim gigabytes.
inline constexpr size_t max_decompressed_bytes = 64 * 1024 * 1024;

/// Fills the wire pair from text: plain below the threshold, else compressed.
void put_config_text(const std::string& text, std::string& plain, std::string& compressed);

/// The text back from a wire pair. False, leaving text alone, when both
/// fields are set, or the compressed one is not exactly one zstd frame with a
/// content checksum that records a size of at most max_decompressed_bytes.
/// Never throws.
bool take_config_text(std::string& plain, const std::string& compressed, std::string& text) noexcept;

} // namespace gtmesh::mesh
