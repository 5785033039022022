// Reproducible HDF5 files: the same job writes the same bytes whenever it runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln::hdf5 {

// HDF5's metadata checksum (Bob Jenkins' lookup3 `hashlittle`, H5_checksum_lookup3), for the object headers it
// stores.
uint32_t checksum_lookup3(const uint8_t* data, size_t length, uint32_t initval = 0);

// A closed file made with a superblock extension (a non-default file space strategy puts one there) carries the
// times that extension's object header was made and changed: HDF5 creates it with its default creation properties,
// which track times, and no API turns that off. Two runs of the same job in different seconds then differ in those
// 16 bytes and the header's checksum. This sets the times to zero and recomputes the checksum. Nothing happens to a
// file without such a header or without stored times; IoError when the file cannot be read or written;
// UnsupportedFormat (and nothing written) when the header is not what HDF5 1.10's format says.
Status superblock_extension_times_clear(const std::string& path);

}  // namespace kiln::hdf5
