// zstd_runs_scan's masks and edges with AVX-512 (BW for the 64-byte compares, VBMI2 for the edges): each mask word's
// edges are packed by one byte compress and written sixteen at a time, so a word costs the same few instructions
// whether it holds no edge (background) or several (a line crossing), and nothing mispredicts. The functions carry
// their target attribute; the file is built for the baseline ISA.
#include <immintrin.h>

#include <bit>

#include "io/zstd_runs_scan.h"

namespace kiln {

bool zstd_runs_avx512_supported() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("bmi2");
  return supported;
#else
  return false;
#endif
}

#if defined(__x86_64__)

namespace {

// Bit j of word w: src[p] == src[p - period] at p = period + 64 w + j; the last word's bits past the end are 0.
__attribute__((target("avx512f,avx512bw,bmi2"))) void equal_masks(const uint8_t* src, size_t span, size_t period,
                                                                 uint64_t* masks) {
  const size_t full = span / 64;
  for (size_t w = 0; w < full; ++w) {
    masks[w] = _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(src + period + 64 * w), _mm512_loadu_si512(src + 64 * w));
  }
  const size_t rest = span - 64 * full;
  if (rest > 0) {
    const __mmask64 valid = _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(rest));
    masks[full] = _mm512_mask_cmpeq_epi8_mask(valid, _mm512_maskz_loadu_epi8(valid, src + period + 64 * full),
                                              _mm512_maskz_loadu_epi8(valid, src + 64 * full));
  }
}

// The edges of `words` mask words (the bits that differ from the bit before; "not equal" before the first) as
// positions, in order, into `edges` (room for 64 per word plus 16); returns how many.
__attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt"))) size_t mask_edges(const uint64_t* masks, size_t words,
                                                                              size_t period, uint32_t* edges) {
  alignas(64) static constexpr uint8_t kIota[64] = {
      0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
      22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
      44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
  const __m512i iota = _mm512_load_si512(kIota);
  const __m512i step = _mm512_set1_epi32(64);
  __m512i base = _mm512_set1_epi32(static_cast<int>(period));
  size_t n = 0;
  uint64_t carry = 0;
  for (size_t w = 0; w < words; ++w) {
    const uint64_t mask = masks[w];
    const uint64_t t = mask ^ ((mask << 1) | carry);
    carry = mask >> 63;
    const __m512i packed = _mm512_maskz_compress_epi8(t, iota);  // the edges' bit indices, first to last
    _mm512_storeu_si512(edges + n, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_castsi512_si128(packed)), base));
    const auto count = static_cast<size_t>(std::popcount(t));
    if (count > 16) [[unlikely]] {
      for (int quarter = 1; quarter * 16 < static_cast<int>(count); ++quarter) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(
            reinterpret_cast<const uint8_t*>(&packed) + 16 * quarter));
        _mm512_storeu_si512(edges + n + 16 * quarter, _mm512_add_epi32(_mm512_cvtepu8_epi32(bytes), base));
      }
    }
    n += count;
    base = _mm512_add_epi32(base, step);
  }
  return n;
}

// zstd_runs_sequences' compaction: the (start, end) pairs of the runs of at least kZstdMinRun bytes kept in order,
// eight pairs (64-bit lanes, start in the low half) at a time; returns the edges kept.
__attribute__((target("avx512f,popcnt"))) size_t long_runs_compact(uint32_t* edges, size_t count) {
  const size_t pairs = count / 2;
  const __m512i low = _mm512_set1_epi64(0xFFFFFFFF);
  const __m512i min_run = _mm512_set1_epi64(static_cast<int64_t>(kZstdMinRun));
  size_t kept = 0;
  size_t i = 0;
  for (; i + 8 <= pairs; i += 8) {
    const __m512i run = _mm512_loadu_si512(edges + 2 * i);
    const __m512i length = _mm512_sub_epi64(_mm512_srli_epi64(run, 32), _mm512_and_si512(run, low));
    const __mmask8 keep = _mm512_cmpge_epu64_mask(length, min_run);
    // Packed in a register and stored whole (a compressing store to memory is slow on Zen 4): the lanes past the
    // kept ones land at most on this block's pairs, already read.
    _mm512_storeu_si512(edges + 2 * kept, _mm512_maskz_compress_epi64(keep, run));
    kept += static_cast<size_t>(std::popcount(static_cast<unsigned>(keep)));
  }
  for (; i < pairs; ++i) {
    const uint32_t start = edges[2 * i], end = edges[2 * i + 1];
    edges[2 * kept] = start;
    edges[2 * kept + 1] = end;
    kept += end - start >= kZstdMinRun ? 1 : 0;
  }
  return 2 * kept;
}

}  // namespace

size_t zstd_runs_find_avx512(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences,
                             ZstdRunScratch& scratch) {
  if (size <= period) return 0;
  const size_t span = size - period;
  const size_t words = (span + 63) / 64;
  scratch.masks.resize(words);
  equal_masks(src, span, period, scratch.masks.data());
  // Room for every bit to be an edge, the sixteen written past the last, and the end added below.
  if (scratch.edges.size() < 64 * words + 17) scratch.edges.resize(64 * words + 17);
  size_t n = mask_edges(scratch.masks.data(), words, period, scratch.edges.data());
  if (n % 2 == 1) scratch.edges[n++] = static_cast<uint32_t>(size);  // the last run reaches the end
  const size_t kept = long_runs_compact(scratch.edges.data(), n);
  return zstd_runs_kept_sequences(scratch.edges.data(), kept, period, sequences);
}

#else

size_t zstd_runs_find_avx512(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences,
                             ZstdRunScratch& scratch) {
  return zstd_runs_find(src, size, period, sequences, scratch);
}

#endif

}  // namespace kiln
