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
  const auto run_end = [&](size_t end) {
    in_run = false;
    if (end - run_start < kZstdMinRun) return;
    ZSTD_Sequence seq{};
    seq.offset = static_cast<unsigned>(period);
    seq.litLength = static_cast<unsigned>(run_start - literal_start);
    seq.matchLength = static_cast<unsigned>(end - run_start);
    sequences.push_back(seq);
    matched += end - run_start;
    literal_start = end;
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
      for (size_t j = 0; base + j < size; ++j)
        mask |= static_cast<uint64_t>(src[base + j] == src[base + j - period]) << j;
    }
    if (mask == (in_run ? ~0ull : 0ull)) continue;  // the current state holds for the whole block
    const size_t valid = std::min<size_t>(64, size - base);
    size_t pos = 0;
    while (pos < valid) {
      const uint64_t rest = (in_run ? ~mask : mask) >> pos;
      if (rest == 0) break;
      pos += static_cast<size_t>(__builtin_ctzll(rest));
      if (pos >= valid) break;
      if (in_run) {
        run_end(base + pos);
      } else {
        run_start = base + pos;
        in_run = true;
      }
    }
  }
  if (in_run) run_end(size);
  return matched;
}

size_t zstd_runs_find(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences);
// The same with AVX2 compares; only on CPUs that have AVX2.
size_t zstd_runs_find_avx2(const uint8_t* src, size_t size, size_t period, std::vector<ZSTD_Sequence>& sequences);

}  // namespace kiln
