#pragma once

// Config texts travel compressed (zstd) between nodes and in the replicated
// log. A 100,000-record config is 35 MB of YAML but about 1.5 MB compressed,
// 1,000,000 records 364 MB and 14 MB: one mesh frame, one Raft entry and one
// RocksDB value each, without chunking, and a push to ten nodes moves a
// twentieth of the bytes.
//
// On the wire a config text is a pair of fields: `y` (the text itself, for
// texts up to compress_above_bytes) or `yz` (one zstd frame that records its
// size). Exactly one of them is set; an empty text is an empty `y`.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace gtmesh::mesh {

/// Texts up to this size travel as they are (readable in a packet dump).
inline constexpr size_t compress_above_bytes = 64 * 1024;
/// The most a config may take compressed, in a push and as a log entry: a
/// Raft entry (and the snapshot holding it) must fit one frame between
/// deciders (envelope.hpp, max_envelope_bytes). Above
/// legacy_compressed_config_bytes only while every member decider states
/// the `large-configs` capability (protocol_version.hpp).
inline constexpr size_t max_compressed_config_bytes = 96 * 1024 * 1024;
/// What nodes without `large-configs` take (their frames stop at 16 MiB).
inline constexpr size_t legacy_compressed_config_bytes = 12 * 1024 * 1024;
/// The largest text a compressed field may expand to: the loader's limit
/// (config::max_config_bytes), so a small frame cannot claim gigabytes.
inline constexpr size_t max_decompressed_bytes = 512 * 1024 * 1024;

/// The zstd frame a text travels in, when one is at hand (null: none).
/// A text that arrived compressed keeps the frame it came in, which decodes
/// to exactly that text (take_config_text checked its checksum and size);
/// handed on with the text, it lets the decider log, store and send the
/// text again by copying the frame instead of compressing the text anew (a
/// push of a 100,000-record config took four zstd passes over 17-35 MB on
/// each decider, about a third of its CPU for the push).
using packed_text = std::shared_ptr<const std::string>;

/// Fills the wire pair from text: plain below the threshold, else compressed.
void put_config_text(const std::string& text, std::string& plain, std::string& compressed);
/// The same, copying `packed` when it is the frame of a text of this size
/// rather than compressing again.
void put_config_text(const std::string& text, const packed_text& packed, std::string& plain, std::string& compressed);

/// The text back from a wire pair. False, leaving text alone, when both
/// fields are set, or the compressed one is not exactly one zstd frame with a
/// content checksum that records a size of at most max_decompressed_bytes.
/// Never throws.
bool take_config_text(std::string& plain, const std::string& compressed, std::string& text) noexcept;
/// The same, and `packed` the frame the text came in (null when it came
/// plain); `compressed` is moved from on success.
bool take_config_text(std::string& plain, std::string& compressed, std::string& text, packed_text& packed) noexcept;

/// The text size a zstd frame records (0 when it records none).
size_t packed_size(const std::string& frame) noexcept;

} // namespace gtmesh::mesh
