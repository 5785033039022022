// The bulk of Crc32::update on CPUs with PCLMULQDQ.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

// Advances the CRC-32 register (pre-inverted, as zlib keeps it internally) over `size` bytes: size >= 64 and a
// multiple of 16. Only on CPUs with PCLMULQDQ and SSE4.1.
uint32_t crc32_clmul_fold(uint32_t state, const uint8_t* data, size_t size);

}  // namespace kiln
