#include "io/zstd_runs.h"

#include <cstring>
#include <string>

#include "core/cpu_isa.h"
#include "io/zstd_runs_scan.h"

namespace kiln {

namespace {

uint64_t load64(const uint8_t* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

// SWAR: the high bit of each byte of a ^ b that is 0, gathered into 8 mask bits by a multiply.
struct PortableEqualMask {
  uint64_t operator()(const uint8_t* a, const uint8_t* b) const {
    constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
    uint64_t mask = 0;
    for (int32_t word = 0; word < 8; ++word) {
      const uint64_t t = load64(a + 8 * word) ^ load64(b + 8 * word);
      const uint64_t zero_bytes = ~(((t & kLow7) + kLow7) | t | kLow7);
      mask |= (((zero_bytes >> 7) * 0x0102040810204080ull) >> 56) << (8 * word);
    }
    return mask;
  }
};

}  // namespace

size_t zstd_runs_kept_sequences(const uint32_t* e, size_t kept, size_t period,
                                std::vector<ZSTD_Sequence>& sequences) {
  const size_t first = sequences.size();
  sequences.resize(first + kept / 2);
  ZSTD_Sequence* seq = sequences.data() + first;
  size_t matched = 0;
  for (size_t i = 0; i < kept; i += 2) {
    const uint32_t literal_start = i == 0 ? 0 : e[i - 1];
    seq[i / 2] = ZSTD_Sequence{static_cast<unsigned>(period), e[i] - literal_start, e[i + 1] - e[i], 0};
    matched += e[i + 1] - e[i];
  }
  return matched;
}

size_t zstd_runs_sequences(uint32_t* e, size_t count, size_t period, std::vector<ZSTD_Sequence>& sequences) {
  size_t kept = 0;
  for (size_t i = 0; i < count; i += 2) {
    const uint32_t start = e[i], end = e[i + 1];
    e[kept] = start;
    e[kept + 1] = end;
    kept += end - start >= kZstdMinRun ? 2 : 0;
  }
  return zstd_runs_kept_sequences(e, kept, period, sequences);
}

size_t zstd_runs_find(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences,
                      ZstdRunScratch& scratch) {
  return zstd_runs_scan(src, size, period, sequences, scratch, PortableEqualMask{});
}

namespace {

std::string zstd_error(size_t code) { return std::string("zstd: ") + ZSTD_getErrorName(code); }

}  // namespace

ZstdRunCompressor::ZstdRunCompressor(int32_t level) : m_cctx(ZSTD_createCCtx()) {
  if (m_cctx == nullptr) {
    m_init = Status(Errc::kOutOfMemory, "zstd: cannot create a compression context");
    return;
  }
  for (auto [param, value] :
       {std::pair{ZSTD_c_compressionLevel, level}, std::pair{ZSTD_c_checksumFlag, 0}, std::pair{ZSTD_c_minMatch, 3},
        std::pair{ZSTD_c_blockDelimiters, static_cast<int>(ZSTD_sf_noBlockDelimiters)},
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
  if (size > UINT32_MAX) return invalid_argument("zstd runs: input of " + std::to_string(size) + " bytes, over 4 GiB");
  m_sequences.clear();
  if (cpu_isa_active() < CpuIsa::kAvx2) {
    m_matched = zstd_runs_find(src, size, period, m_sequences, m_scratch);
  } else if (zstd_runs_avx512_supported()) {
    m_matched = zstd_runs_find_avx512(src, size, period, m_sequences, m_scratch);
  } else {
    m_matched = zstd_runs_find_avx2(src, size, period, m_sequences, m_scratch);
  }
  // Bytes after the last match are literals (ZSTD_compressSequences treats the rest of src as such).
  // Into a scratch buffer kept at its size: growing `out` by the bound would zero ~size bytes on every call.
  ZSTD_CCtx_setPledgedSrcSize(m_cctx, size);
  const size_t bound = ZSTD_compressBound(size);
  if (m_frame.size() < bound) m_frame.resize(bound);
  const size_t n = ZSTD_compressSequences(m_cctx, m_frame.data(), bound, m_sequences.data(), m_sequences.size(), src,
                                          size);
  if (ZSTD_isError(n)) {
    ZSTD_CCtx_reset(m_cctx, ZSTD_reset_session_only);
    return io_error(zstd_error(n));
  }
  out.insert(out.end(), m_frame.data(), m_frame.data() + n);
  return Status::ok();
}

}  // namespace kiln
