#include "io/hdf5_zstd_register.h"

#include <hdf5.h>

#include <mutex>

#include "io/h5z_zstd/h5z_zstd_filter.h"

namespace kiln {

static_assert(kHdf5ZstdFilterId == KILN_H5Z_ZSTD_ID);

Status hdf5_zstd_register() {
  static std::once_flag once;
  static Status result;
  std::call_once(once, [] {
    if (H5Zregister(&kiln_h5z_zstd_class) < 0) {
      result = io_error("cannot register the HDF5 zstd filter (32015) with H5Zregister");
    }
  });
  return result;
}

}  // namespace kiln
