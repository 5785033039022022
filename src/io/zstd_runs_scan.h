// The run finder of zstd_runs.cpp, written once over a 64-byte equality mask; zstd_runs.cpp instantiates it with a
// portable mask (SWAR), zstd_runs_avx2.cpp (built with -mavx2) with AVX2 compares.
#pragma once

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

// Runs shorter than this stay literals: a sequence costs a few bytes of its own.
inline constexpr size_t kZstdMinRun = 8;

// Appends one sequence (offset `period`) per maximal run of at least kZstdMinRun bytes equal to the byte `period`
// earlier, in order; returns the bytes they cover. EqualMask(a, b) has bit j set where a[j] == b[j] (64 bytes).
template <typename EqualMask>
size_t zstd_runs_scan(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences,
                      EqualMask equal_mask) {
  size_t matched = 0;
  size_t literal_start = 0;
  bool in_run = false;
  size_t run_start = 0;
  size_t n = sequences.size();  // sequences written; the vector is kept at least 64 longer than that
  // A run ending at `end`: a sequence when it is long enough. Branch-free (the slot is written either way and kept
  // or not): whether a run is long enough does not predict well.
  const auto run_end = [&](size_t end) {
    const size_t length = end - run_start;
    const bool keep = length >= kZstdMinRun;
    ZSTD_Sequence& seq = sequences[n];
    seq.offset = static_cast<unsigned>(period);
    seq.litLength = static_cast<unsigned>(run_start - literal_start);
    seq.matchLength = static_cast<unsigned>(length);
    seq.rep = 0;
    n += keep ? 1 : 0;
    matched += keep ? length : 0;
    literal_start = keep ? end : literal_start;
  };
  for (size_t base = period; base < size; base += 64) {
    uint64_t mask = 0;
    if (base + 64 <= size) {
      // The common case, blocks that keep the current state (all equal inside a run, none outside), in a loop of
      // its own so that its few variables stay in registers.
      const uint64_t keep = in_run ? ~0ull : 0ull;
      mask = equal_mask(src + base, src + base - period);
      while (mask == keep && base + 128 <= size) {
        base += 64;
        mask = equal_mask(src + base, src + base - period);
      }
    } else {
      for (size_t j = 0; base + j < size; ++j) {
        mask |= static_cast<uint64_t>(src[base + j] == src[base + j - period]) << j;
      }
    }
    if (mask == (in_run ? ~0ull : 0ull)) continue;  // the current state holds for the whole block
    // Runs start where a bit is set and the one before it (or the state before the block) is not, and end where a
    // bit is clear after a set one; the transitions are visited in order.
    const size_t valid = std::min<size_t>(64, size - base);
    const uint64_t valid_bits = valid == 64 ? ~0ull : (1ull << valid) - 1;
    const uint64_t before = (mask << 1) | (in_run ? 1u : 0u);
    const uint64_t ends = ~mask & before & valid_bits;
    uint64_t transitions = ((mask & ~before) | ends) & valid_bits;
    if (sequences.size() < n + 64) sequences.resize(n + 64 + n / 2);
    while (transitions != 0) {
      const auto pos = static_cast<size_t>(__builtin_ctzll(transitions));
      transitions &= transitions - 1;
      if ((ends >> pos) & 1) {
        run_end(base + pos);
      } else {
        run_start = base + pos;
      }
    }
    in_run = (mask >> (valid - 1)) & 1;
  }
  if (sequences.size() < n + 1) sequences.resize(n + 1);
  if (in_run) run_end(size);
  sequences.resize(n);
  return matched;
}

size_t zstd_runs_find(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences);
// The same with AVX2 compares; only on CPUs that have AVX2.
size_t zstd_runs_find_avx2(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences);

}  // namespace kiln
