#pragma once

// A config text and a zstd frame of it made otherwise than
// mesh::put_config_text makes one (level 1, as a sender's zstd may choose):
// tests that a received frame is passed on as it came (packed_text) tell
// it from one this build would make again.

#include <zstd.h>

#include <string>

namespace gtmesh::test {

/// 20,000 records' lines: above the size a text travels compressed.
inline std::string large_config_text() {
  std::string text;
  for (int i = 0; i < 20000; ++i)
    text += "      - {name: r" + std::to_string(i) + ", type: A, ttl: 30, answers: [10.0.0.1]}\n";
  return text;
}

/// `text` as one zstd frame at level 1, with its size and a checksum.
inline std::string level_1_frame(const std::string& text) {
  std::string frame(ZSTD_compressBound(text.size()), '\0');
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
  frame.resize(ZSTD_compress2(c, frame.data(), frame.size(), text.data(), text.size()));
  ZSTD_freeCCtx(c);
  return frame;
}

} // namespace gtmesh::test
