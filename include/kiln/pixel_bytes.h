// The bytes of a decoded image (ImageBuffer::pixels): a std::vector<uint8_t> in everything it does (resize zero-fills,
// a copy copies), with an allocator that also lets a decoder that writes every byte grow it without the zero-fill
// first (src/io/decode_memory.h): at 512 x 512 that fill was a third of a BMP decode. Compares equal to a
// std::vector<uint8_t> with the same bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace kiln {

// The bytes such a growth constructs: none (0 where a vector assigns one instead of constructing it).
struct UninitializedByte {
  constexpr operator uint8_t() const { return 0; }
};

// std::allocator, and constructing from an UninitializedByte leaves the byte as it is. Everything else is
// constructed as std::allocator constructs it (a resize value-initializes: zeroes).
template <typename T>
struct PixelAllocator : std::allocator<T> {
  PixelAllocator() noexcept = default;
  template <typename U>
  PixelAllocator(const PixelAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor): rebinding
  template <typename U>
  void construct(U*, const UninitializedByte&) noexcept {}
};

template <typename T, typename U>
bool operator==(const PixelAllocator<T>&, const PixelAllocator<U>&) noexcept {
  return true;
}

using PixelBytes = std::vector<uint8_t, PixelAllocator<uint8_t>>;

inline bool operator==(const PixelBytes& a, const std::vector<uint8_t>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace kiln
