// The buffers of a decode (its pixels, a GIF's indices). A large one is reserved with a hint for huge pages: a fresh
// 36 MB buffer (12 MP RGB) is otherwise faulted in 9,000 times, 4 KB at a time, which on a virtual machine costs more
// than decoding into it (BMP at 12 MP: about 150 ms of page faults per image). Linux's transparent huge pages in
// their usual `madvise` mode fault it in 2 MB at a time. A hint only: without it (other systems, THP off) nothing
// changes. And a decoder that writes every byte grows its pixels without the zero-fill (decode_buffer_grow).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "kiln/pixel_bytes.h"

namespace kiln {

// buffer.reserve(bytes), then MADV_HUGEPAGE on the 2 MB-aligned part of its storage when that is 8 MB or more.
void decode_buffer_reserve(std::vector<uint8_t>& buffer, size_t bytes);
void decode_buffer_reserve(PixelBytes& buffer, size_t bytes);

// `count` UninitializedBytes: what vector::insert constructs (as nothing) in decode_buffer_grow.
class UninitializedBytes {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = UninitializedByte;
  using difference_type = std::ptrdiff_t;
  using pointer = const UninitializedByte*;
  using reference = const UninitializedByte&;

  explicit UninitializedBytes(difference_type at = 0) : m_at(at) {}
  reference operator*() const { return kByte; }
  reference operator[](difference_type) const { return kByte; }
  UninitializedBytes& operator++() { return *this += 1; }
  UninitializedBytes operator++(int) { return UninitializedBytes(m_at++); }
  UninitializedBytes& operator--() { return *this -= 1; }
  UninitializedBytes operator--(int) { return UninitializedBytes(m_at--); }
  UninitializedBytes& operator+=(difference_type n) {
    m_at += n;
    return *this;
  }
  UninitializedBytes& operator-=(difference_type n) {
    m_at -= n;
    return *this;
  }
  friend UninitializedBytes operator+(UninitializedBytes a, difference_type n) { return a += n; }
  friend UninitializedBytes operator+(difference_type n, UninitializedBytes a) { return a += n; }
  friend UninitializedBytes operator-(UninitializedBytes a, difference_type n) { return a -= n; }
  friend difference_type operator-(const UninitializedBytes& a, const UninitializedBytes& b) { return a.m_at - b.m_at; }
  friend bool operator==(const UninitializedBytes& a, const UninitializedBytes& b) { return a.m_at == b.m_at; }
  friend auto operator<=>(const UninitializedBytes& a, const UninitializedBytes& b) { return a.m_at <=> b.m_at; }

 private:
  static constexpr UninitializedByte kByte{};
  difference_type m_at;
};

// Appends `bytes` bytes left as the allocator gave them (the caller writes every one before anyone reads them) and
// returns where they start; storage it has to get is reserved as decode_buffer_reserve does.
inline uint8_t* decode_buffer_grow(PixelBytes& buffer, size_t bytes) {
  const size_t at = buffer.size();
  if (buffer.capacity() - at < bytes) decode_buffer_reserve(buffer, at + bytes);
  buffer.insert(buffer.end(), UninitializedBytes(0), UninitializedBytes(static_cast<std::ptrdiff_t>(bytes)));
  return buffer.data() + at;
}

}  // namespace kiln
