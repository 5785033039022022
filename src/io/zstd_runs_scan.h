// The run finder of zstd_runs.cpp, written once over a 64-byte equality mask; zstd_runs.cpp instantiates it with a
// portable mask (SWAR), zstd_runs_avx2.cpp (built with -mavx2) with AVX2 compares.
#pragma once

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

// Runs shorter than this stay literals: a sequence costs a few bytes of its own.
inline constexpr size_t kZstdMinRun = 8;

// Working memory of one scan, kept between calls.
struct ZstdRunScratch {
  std::vector<uint64_t> masks;  // bit j of word w: src[p] == src[p - period] at p = period + 64 w + j
  std::vector<uint32_t> edges;  // positions where that switches on (a run starts) or off (it ends), in order
};

// The third pass over the `count` edges (alternately a run's start and end) of the scans below: the runs of at
// least kZstdMinRun bytes, compacted in place (the write index never passes the read index), then their sequences:
// literals from the end of the kept run before. Returns the bytes the kept runs cover.
// Defined once in zstd_runs.cpp (baseline ISA), so that no ISA file emits a copy the generic path could call.
size_t zstd_runs_sequences(uint32_t* e, size_t count, size_t period, std::vector<ZSTD_Sequence>& sequences);
// Its second half: the sequences of `kept` edges that are already the long runs' only.
size_t zstd_runs_kept_sequences(const uint32_t* e, size_t kept, size_t period,
                                std::vector<ZSTD_Sequence>& sequences);

// Appends one sequence (offset `period`) per maximal run of at least kZstdMinRun bytes equal to the byte `period`
// earlier, in order; returns the bytes they cover. EqualMask(a, b) has bit j set where a[j] == b[j] (64 bytes).
// size < 2^32. Three passes without data-dependent branches in their inner work (a chart row is crossed by a line
// every few dozen bytes, so per-run branches mispredict): the equality masks, the edges of their runs of ones, and
// the sequences of the runs long enough.
template <typename EqualMask>
size_t zstd_runs_scan(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences,
                      ZstdRunScratch& scratch, EqualMask equal_mask) {
  if (size <= period) return 0;
  const size_t span = size - period;
  const size_t words = (span + 63) / 64;
  scratch.masks.resize(words);
  uint64_t* masks = scratch.masks.data();
  const size_t full = span / 64;
  for (size_t w = 0; w < full; ++w) masks[w] = equal_mask(src + period + 64 * w, src + 64 * w);
  if (full < words) {
    uint64_t mask = 0;
    for (size_t j = 0; period + 64 * full + j < size; ++j) {
      mask |= static_cast<uint64_t>(src[period + 64 * full + j] == src[64 * full + j]) << j;
    }
    masks[full] = mask;
  }

  // Edges: bits that differ from the bit before (the state before position `period` is "not equal"). Eight are
  // written whether the word has them or not, so that the usual count costs no branch; the array keeps 64 spare.
  size_t n = 0;
  uint64_t carry = 0;
  if (scratch.edges.size() < 64) scratch.edges.resize(64);
  for (size_t w = 0; w < words; ++w) {
    const uint64_t mask = masks[w];
    uint64_t t = mask ^ ((mask << 1) | carry);
    carry = mask >> 63;
    if (t == 0) continue;
    if (scratch.edges.size() < n + 64) scratch.edges.resize(2 * scratch.edges.size());
    uint32_t* out = scratch.edges.data() + n;
    const auto base = static_cast<uint32_t>(period + 64 * w);
    const int count = std::popcount(t);
    for (int i = 0; i < 8; ++i) {
      out[i] = base + static_cast<uint32_t>(std::countr_zero(t));
      t &= t - 1;
    }
    for (int i = 8; i < count; ++i) {
      out[i] = base + static_cast<uint32_t>(std::countr_zero(t));
      t &= t - 1;
    }
    n += static_cast<size_t>(count);
  }
  if (n % 2 == 1) {  // the last run reaches the end
    if (scratch.edges.size() < n + 1) scratch.edges.resize(n + 1);
    scratch.edges[n++] = static_cast<uint32_t>(size);
  }
  return zstd_runs_sequences(scratch.edges.data(), n, period, sequences);
}

size_t zstd_runs_find(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences,
                      ZstdRunScratch& scratch);
// The same with AVX2 compares; only on CPUs that have AVX2.
size_t zstd_runs_find_avx2(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences,
                           ZstdRunScratch& scratch);
// The same with AVX-512 compares and the edges of a mask word written at once (VBMI2 byte compress), without a
// branch per word; only where zstd_runs_avx512_supported().
size_t zstd_runs_find_avx512(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences,
                             ZstdRunScratch& scratch);
bool zstd_runs_avx512_supported();

}  // namespace kiln
