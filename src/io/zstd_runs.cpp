#include "io/zstd_runs.h"

#include <cstring>
#include <string>

namespace kiln {

namespace {

inline uint64_t load64(const uint8_t* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

// First index >= i (< n) where src[k] != src[k - period], or n. Skips 32 equal bytes per step.
size_t run_end(const uint8_t* src, size_t i, size_t n, size_t period) {
  const uint8_t* back = src - period;
  while (i + 32 <= n) {
    const uint64_t diff = (load64(src + i) ^ load64(back + i)) | (load64(src + i + 8) ^ load64(back + i + 8)) |
                          (load64(src + i + 16) ^ load64(back + i + 16)) | (load64(src + i + 24) ^ load64(back + i + 24));
    if (diff != 0) break;
    i += 32;
  }
  while (i + 8 <= n) {
    uint64_t a = 0;
    uint64_t b = 0;
    std::memcpy(&a, src + i, 8);
    std::memcpy(&b, src + i - period, 8);
    if (a != b) return i + static_cast<size_t>(__builtin_ctzll(a ^ b) / 8);
    i += 8;
  }
  while (i < n && src[i] == src[i - period]) ++i;
  return i;
}

// First index >= i where a run of at least kMinRun repeated bytes starts, or n.
size_t next_run(const uint8_t* src, size_t i, size_t n, size_t period, size_t* end) {
  while (i < n) {
    if (src[i] != src[i - period]) {
      ++i;
      continue;
    }
    const size_t e = run_end(src, i, n, period);
    if (e - i >= ZstdRunCompressor::kMinRun) {
      *end = e;
      return i;
    }
    i = e + 1;
  }
  *end = n;
  return n;
}

std::string zstd_error(size_t code) { return std::string("zstd: ") + ZSTD_getErrorName(code); }

}  // namespace

ZstdRunCompressor::ZstdRunCompressor(int32_t level) : m_cctx(ZSTD_createCCtx()) {
  if (m_cctx == nullptr) {
    m_init = Status(Errc::kOutOfMemory, "zstd: cannot create a compression context");
    return;
  }
  for (auto [param, value] : {std::pair{ZSTD_c_compressionLevel, level}, std::pair{ZSTD_c_checksumFlag, 1},
                              std::pair{ZSTD_c_minMatch, 3}, std::pair{ZSTD_c_blockDelimiters, static_cast<int>(ZSTD_sf_noBlockDelimiters)},
                              std::pair{ZSTD_c_validateSequences, 0}}) {
    const size_t rc = ZSTD_CCtx_setParameter(m_cctx, param, value);
    if (ZSTD_isError(rc)) {
      m_init = io_error(zstd_error(rc));
      return;
    }
  }
}

ZstdRunCompressor::~ZstdRunCompressor() { ZSTD_freeCCtx(m_cctx); }

Status ZstdRunCompressor::compress(const uint8_t* src, size_t size, size_t period, std::vector<uint8_t>& out) {
  KILN_TRY(m_init);
  if (period == 0) return invalid_argument("zstd runs: period must be positive");
  m_sequences.clear();
  m_matched = 0;
  size_t literal_start = 0;
  size_t i = std::min(period, size);
  while (i < size) {
    size_t end = 0;
    const size_t start = next_run(src, i, size, period, &end);
    if (start >= size) break;
    ZSTD_Sequence seq{};
    seq.offset = static_cast<unsigned>(period);
    seq.litLength = static_cast<unsigned>(start - literal_start);
    seq.matchLength = static_cast<unsigned>(end - start);
    m_sequences.push_back(seq);
    m_matched += end - start;
    literal_start = end;
    i = end;
  }
  // Bytes after the last match are literals (ZSTD_compressSequences treats the rest of src as such).
  ZSTD_CCtx_setPledgedSrcSize(m_cctx, size);
  const size_t start = out.size();
  out.resize(start + ZSTD_compressBound(size));
  const size_t n =
      ZSTD_compressSequences(m_cctx, out.data() + start, out.size() - start, m_sequences.data(), m_sequences.size(), src, size);
  if (ZSTD_isError(n)) {
    out.resize(start);
    ZSTD_CCtx_reset(m_cctx, ZSTD_reset_session_only);
    return io_error(zstd_error(n));
  }
  out.resize(start + n);
  return Status::ok();
}

}  // namespace kiln
