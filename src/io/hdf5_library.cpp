#include "io/hdf5_library.h"

#include <hdf5.h>

namespace kiln {

void hdf5_exit_cleanup_disable() { H5dont_atexit(); }

}  // namespace kiln
