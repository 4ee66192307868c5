#include "core/mesh/config_compression.hpp"

#include <zstd.h>

#include <memory>
#include <new>
#include <stdexcept>

namespace gtmesh::mesh {

namespace {

/// zstd's default level.
constexpr int compression_level = 3;
/// From this size a text is compressed on two threads.
constexpr size_t parallel_compress_bytes = 8u << 20;

std::string compress(const std::string& text) {
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!cctx)
    throw std::bad_alloc();
  // The frame records the text's size (checked before decompressing) and a
  // checksum of it (a flipped bit is refused, not loaded).
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, compression_level);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_contentSizeFlag, 1);
  // A big text on two threads (zstd's own; a build without them refuses
  // the parameter and compresses on this one): 347 MB at 1,000,000
  // records took a second here. The frame is an ordinary one, read alike.
  const bool threads = text.size() >= parallel_compress_bytes &&
                       !ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_nbWorkers, 2));
  // Into a buffer nothing has touched: a string of the bound's size is
  // zeroed first, the whole text's size in page faults and writes for an
  // output of a twentieth of it.
  const size_t bound = ZSTD_compressBound(text.size());
  std::unique_ptr<char[]> out(new char[bound]);
  size_t n = ZSTD_compress2(cctx.get(), out.get(), bound, text.data(), text.size());
  if (ZSTD_isError(n) && threads) { // its threads could not be had (a process limit): on this one
    ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_only);
    ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_nbWorkers, 0);
    n = ZSTD_compress2(cctx.get(), out.get(), bound, text.data(), text.size());
  }
  if (ZSTD_isError(n))
    throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
  return std::string(out.get(), n);
}

} // namespace

void put_config_text(const std::string& text, std::string& plain, std::string& compressed) {
  plain.clear();
  compressed.clear();
  if (text.size() <= compress_above_bytes)
    plain = text;
  else
    compressed = compress(text);
}

void put_config_text(const std::string& text, const packed_text& packed, std::string& plain, std::string& compressed) {
  if (!packed || text.size() <= compress_above_bytes || packed_size(*packed) != text.size())
    return put_config_text(text, plain, compressed);
  plain.clear();
  compressed = *packed;
}

size_t packed_size(const std::string& frame) noexcept {
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  return size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR ? 0 : static_cast<size_t>(size);
}

bool take_config_text(std::string& plain, std::string& compressed, std::string& text, packed_text& packed) noexcept {
  if (!take_config_text(plain, static_cast<const std::string&>(compressed), text))
    return false;
  try {
    packed = compressed.empty() ? nullptr : std::make_shared<const std::string>(std::move(compressed));
  } catch (...) {
    packed = nullptr; // bad_alloc: compressed again when needed
  }
  return true;
}

bool take_config_text(std::string& plain, const std::string& compressed, std::string& text) noexcept {
  if (compressed.empty()) {
    text = std::move(plain);
    return true;
  }
  if (!plain.empty())
    return false;
  // A zstd frame (not a skippable one) that carries a content checksum, as
  // put_config_text writes them: magic 0xFD2FB528 (little-endian), then the
  // frame header descriptor, whose bit 2 is the checksum flag.
  if (compressed.size() < 5 || static_cast<uint8_t>(compressed[0]) != 0x28 ||
      static_cast<uint8_t>(compressed[1]) != 0xb5 || static_cast<uint8_t>(compressed[2]) != 0x2f ||
      static_cast<uint8_t>(compressed[3]) != 0xfd || (static_cast<uint8_t>(compressed[4]) & 0x04) == 0)
    return false;
  // One whole frame, nothing after it, and a recorded size within the limit
  // before a byte is allocated.
  if (ZSTD_findFrameCompressedSize(compressed.data(), compressed.size()) != compressed.size())
    return false;
  unsigned long long size = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR || size > max_decompressed_bytes)
    return false;
  try {
    std::string out(static_cast<size_t>(size), '\0');
    size_t n = ZSTD_decompress(out.data(), out.size(), compressed.data(), compressed.size());
    if (ZSTD_isError(n) || n != out.size())
      return false;
    text = std::move(out);
    return true;
  } catch (...) {
    return false; // bad_alloc
  }
}

} // namespace gtmesh::mesh
