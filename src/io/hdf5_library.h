// Process-wide HDF5 library settings, callable from code that does not see hdf5.h (the CLI, the Python module).
#pragma once

namespace kiln {

// HDF5 closes every file still open in an exit handler, and crashes there (H5F__close_cb) on a file whose close
// already failed, as on a full disk. kiln closes its files itself, so the handler is turned off; call this before any
// other HDF5 call.
void hdf5_exit_cleanup_disable();

}  // namespace kiln
