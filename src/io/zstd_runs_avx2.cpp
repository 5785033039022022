// zstd_runs_scan with AVX2 compares (this file is built with -mavx2).
#include <immintrin.h>

#include "io/zstd_runs_scan.h"

namespace kiln {

namespace {

struct Avx2EqualMask {
  static __m256i load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

  uint64_t operator()(const uint8_t* a, const uint8_t* b) const {
    const auto half = [](const uint8_t* x, const uint8_t* y) {
      return static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(load(x), load(y)))));
    };
    return half(a, b) | (half(a + 32, b + 32) << 32);
  }
};

}  // namespace

size_t zstd_runs_find_avx2(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences,
                           ZstdRunScratch& scratch) {
  return zstd_runs_scan(src, size, period, sequences, scratch, Avx2EqualMask{});
}

}  // namespace kiln
