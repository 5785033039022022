// HDF5's Fletcher-32 checksum (H5Z_FILTER_FLETCHER32): what the filter appends to a chunk, little-endian, and checks
// when reading. kiln appends it itself to chunks it writes with H5Dwrite_chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

// The checksum of HDF5's H5_checksum_fletcher32: big-endian 16-bit words, sums folded every 360 words, an odd last
// byte as the high half of a word.
uint32_t hdf5_fletcher32(const uint8_t* data, size_t size);

// Appends the 4-byte trailer of the Fletcher-32 filter for out[start, end) to out.
void hdf5_fletcher32_append(std::vector<uint8_t>& out, size_t start);

}  // namespace kiln
