// zstd for images that are mostly runs of one value (chart images are ~99% background): instead of zstd's match
// finder, a linear scan (zstd_runs_scan.h) emits every run where a byte equals the byte `period` earlier (period =
// pixel size) as a match at offset `period`, and everything else as literals; zstd then only entropy-codes those
// sequences (ZSTD_compressSequences). The result is an ordinary zstd frame that any zstd decoder reads.
#pragma once

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "io/zstd_runs_scan.h"
#include "kiln/status.h"

namespace kiln {

class ZstdRunCompressor {
 public:
  explicit ZstdRunCompressor(int32_t level);
  ~ZstdRunCompressor();
  ZstdRunCompressor(const ZstdRunCompressor&) = delete;
  ZstdRunCompressor& operator=(const ZstdRunCompressor&) = delete;

  // Appends the compressed frame (with content size, without checksum) to `out`. `period` is the repeat unit in bytes.
  Status compress(const uint8_t* src, size_t size, size_t period, std::vector<uint8_t>& out);
  // Bytes covered by matches in the last call (for tests and for deciding whether the input was sparse).
  size_t last_matched_bytes() const { return m_matched; }

 private:
  ZSTD_CCtx* m_cctx = nullptr;
  Status m_init;
  std::vector<ZSTD_Sequence> m_sequences;
  ZstdRunScratch m_scratch;
  std::vector<uint8_t> m_frame;
  size_t m_matched = 0;
};

}  // namespace kiln
