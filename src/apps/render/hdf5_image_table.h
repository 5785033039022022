// A panel's per-image table in its HDF5 output, beside images/sequences/index: the datasets symbol (fixed-length
// ASCII, N), start_date and end_date (int32 yyyymmdd, N), ret_5d, ret_20d, ret_60d and market_cap (float64, N, NaN
// where unknown). They are written whole once the images are (finish(), kiln merge), with their CRC-32 in the root
// attribute table_checksum ("crc32 table=1a2b3c4d"), which checksum_verify checks beside the content checksum.
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>

#include "apps/render/image_table.h"
#include "kiln/status.h"

namespace kiln::hdf5 {

// "crc32 table=1a2b3c4d": the CRC-32 of the table's values, column by column (each symbol as its length and bytes).
std::string image_table_checksum(const ImageTable& table);
// Opens `path` for writing, replaces the table's datasets with `table`'s rows and its table_checksum, closes and
// fsyncs it.
Status image_table_write(const std::string& path, const ImageTable& table);
// The table stored in `path`, or nullopt when it holds none.
Result<std::optional<ImageTable>> image_table_read(const std::string& path);
// Rereads the table of the open `file` and compares its checksum with table_checksum: IoError "<path> is damaged:
// table checksum 0a1b2c3d, stored 4e5f6a7b" (or unreadable) otherwise. Ok for a file without table_checksum (no
// table, or written before kiln kept one).
Status image_table_verify(hid_t file, const std::string& path);

}  // namespace kiln::hdf5
