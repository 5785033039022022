// In-process registration of the HDF5 Zstandard filter (id 32015), so kiln reads and writes zstd datasets
// without HDF5_PLUGIN_PATH. The same filter code is built as the plugin module libh5z_kiln_zstd.so.
#pragma once

#include "kiln/status.h"

namespace kiln {

inline constexpr int kHdf5ZstdFilterId = 32015;

// Registers the filter with H5Zregister once per process; later calls return the first result.
Status hdf5_zstd_register();

}  // namespace kiln
