#include "io/png_defilter.h"

#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kiln {

namespace {

enum Filter : uint8_t { kNone = 0, kSub = 1, kUp = 2, kAverage = 3, kPaeth = 4 };

uint8_t paeth_predictor(int a, int b, int c) {
  const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
  return static_cast<uint8_t>(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

#if defined(__SSE2__)

// One pixel of 3 or 4 bytes in the low 16-bit lanes of a register, and back. Three bytes go through integer
// registers: a 3-byte memcpy through the stack stalls store forwarding on every pixel.
template <size_t kBpp>
__m128i pixel_load(const uint8_t* p) {
  uint32_t v = 0;
  if constexpr (kBpp == 4) {
    std::memcpy(&v, p, 4);
  } else {
    uint16_t low = 0;
    std::memcpy(&low, p, 2);
    v = low | (uint32_t{p[2]} << 16);
  }
  return _mm_unpacklo_epi8(_mm_cvtsi32_si128(static_cast<int>(v)), _mm_setzero_si128());
}

template <size_t kBpp>
void pixel_store(uint8_t* p, __m128i lanes) {
  const auto v = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_packus_epi16(lanes, lanes)));
  if constexpr (kBpp == 4) {
    std::memcpy(p, &v, 4);
  } else {
    const auto low = static_cast<uint16_t>(v);
    std::memcpy(p, &low, 2);
    p[2] = static_cast<uint8_t>(v >> 16);
  }
}

__m128i abs16(__m128i x) { return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x)); }

// The byte-wise sum of the 16-bit lanes, kept to 8 bits.
__m128i add8(__m128i x, __m128i y) { return _mm_and_si128(_mm_add_epi16(x, y), _mm_set1_epi16(0xFF)); }

__m128i select(__m128i mask, __m128i yes, __m128i no) {
  return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

template <size_t kBpp>
void sub_sse2(const uint8_t* filtered, uint8_t* out, size_t row_bytes) {
  __m128i a = _mm_setzero_si128();
  for (size_t i = 0; i < row_bytes; i += kBpp) {
    a = add8(a, pixel_load<kBpp>(filtered + i));
    pixel_store<kBpp>(out + i, a);
  }
}

template <size_t kBpp>
void average_sse2(const uint8_t* filtered, const uint8_t* prev, uint8_t* out, size_t row_bytes) {
  __m128i a = _mm_setzero_si128();
  for (size_t i = 0; i < row_bytes; i += kBpp) {
    const __m128i b = pixel_load<kBpp>(prev + i);
    a = add8(pixel_load<kBpp>(filtered + i), _mm_srli_epi16(_mm_add_epi16(a, b), 1));
    pixel_store<kBpp>(out + i, a);
  }
}

// Paeth: the neighbour (left a, up b, up-left c) nearest to a + b - c, ties in the order a, b, c.
template <size_t kBpp>
void paeth_sse2(const uint8_t* filtered, const uint8_t* prev, uint8_t* out, size_t row_bytes) {
  __m128i a = _mm_setzero_si128(), c = _mm_setzero_si128();
  for (size_t i = 0; i < row_bytes; i += kBpp) {
    const __m128i b = pixel_load<kBpp>(prev + i);
    const __m128i pa_signed = _mm_sub_epi16(b, c), pb_signed = _mm_sub_epi16(a, c);
    const __m128i pa = abs16(pa_signed), pb = abs16(pb_signed), pc = abs16(_mm_add_epi16(pa_signed, pb_signed));
    const __m128i smallest = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
    const __m128i nearest = select(_mm_cmpeq_epi16(smallest, pa), a, select(_mm_cmpeq_epi16(smallest, pb), b, c));
    a = add8(nearest, pixel_load<kBpp>(filtered + i));
    pixel_store<kBpp>(out + i, a);
    c = b;
  }
}

template <size_t kBpp>
bool defilter_sse2(uint8_t filter, const uint8_t* filtered, const uint8_t* prev, uint8_t* out, size_t row_bytes) {
  switch (filter) {
    case kSub:
      sub_sse2<kBpp>(filtered, out, row_bytes);
      return true;
    case kAverage:
      average_sse2<kBpp>(filtered, prev, out, row_bytes);
      return true;
    case kPaeth:
      paeth_sse2<kBpp>(filtered, prev, out, row_bytes);
      return true;
    default:
      return png_defilter_row_scalar(filter, filtered, prev, out, row_bytes, kBpp);
  }
}

#endif

}  // namespace

bool png_defilter_row_scalar(uint8_t filter, const uint8_t* filtered, const uint8_t* prev, uint8_t* out,
                             size_t row_bytes, size_t bpp) {
  // Bytes of the first pixel have no left neighbour (0).
  const auto left = [&](size_t i) -> int { return i >= bpp ? out[i - bpp] : 0; };
  const auto up_left = [&](size_t i) -> int { return i >= bpp ? prev[i - bpp] : 0; };
  switch (filter) {
    case kNone:
      std::memcpy(out, filtered, row_bytes);
      return true;
    case kSub:
      for (size_t i = 0; i < row_bytes; ++i) out[i] = static_cast<uint8_t>(filtered[i] + left(i));
      return true;
    case kUp:
      for (size_t i = 0; i < row_bytes; ++i) out[i] = static_cast<uint8_t>(filtered[i] + prev[i]);
      return true;
    case kAverage:
      for (size_t i = 0; i < row_bytes; ++i) out[i] = static_cast<uint8_t>(filtered[i] + ((left(i) + prev[i]) >> 1));
      return true;
    case kPaeth:
      for (size_t i = 0; i < row_bytes; ++i) {
        out[i] = static_cast<uint8_t>(filtered[i] + paeth_predictor(left(i), prev[i], up_left(i)));
      }
      return true;
    default:
      return false;
  }
}

bool png_defilter_row(uint8_t filter, const uint8_t* filtered, const uint8_t* prev, uint8_t* out, size_t row_bytes,
                      size_t bpp) {
#if defined(__SSE2__)
  if (bpp == 3) return defilter_sse2<3>(filter, filtered, prev, out, row_bytes);
  if (bpp == 4) return defilter_sse2<4>(filter, filtered, prev, out, row_bytes);
#endif
  return png_defilter_row_scalar(filter, filtered, prev, out, row_bytes, bpp);
}

}  // namespace kiln
