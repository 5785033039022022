// Seeded random numbers for benchmark inputs (the bench programs and `kiln bench`). splitmix64 rather than
// std:: distributions, whose output differs between standard libraries, so that every run sees the same data.
#pragma once

#include <cstdint>

namespace kiln::bench {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace kiln::bench
