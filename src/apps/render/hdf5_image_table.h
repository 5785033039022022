// A panel's per-image table in its HDF5 output, beside images/sequences/index: the datasets symbol (fixed-length
// ASCII, N), start_date and end_date (int32 yyyymmdd, N), ret_5d, ret_20d, ret_60d and market_cap (float64, N, NaN
// where unknown). They are written whole once the images are (finish(), kiln merge), not covered by the checksum
// attribute.
#pragma once

#include <optional>
#include <string>

#include "apps/render/image_table.h"
#include "kiln/status.h"

namespace kiln::hdf5 {

// Opens `path` for writing, replaces the table's datasets with `table`'s rows, closes and fsyncs it.
Status image_table_write(const std::string& path, const ImageTable& table);
// The table stored in `path`, or nullopt when it holds none.
Result<std::optional<ImageTable>> image_table_read(const std::string& path);

}  // namespace kiln::hdf5
