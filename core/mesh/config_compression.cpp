#include "core/mesh/config_compression.hpp"

#include <zstd.h>

#include <memory>
#include <new>
#include <stdexcept>

namespace gtmesh::mesh {

namespace {

/// zstd's default level.
constexpr int compression_level = 3;

std::string compress(const std::string& text) {
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!cctx)
    throw std::bad_alloc();
  // The frame records the text's size (checked before decompressing) and a
  // checksum of it (a flipped bit is refused, not loaded).
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, compression_level);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_contentSizeFlag, 1);
  std::string out(ZSTD_compressBound(text.size()), '\0');
  size_t n = ZSTD_compress2(cctx.get(), out.data(), out.size(), text.data(), text.size());
  if (ZSTD_isError(n))
    throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
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
