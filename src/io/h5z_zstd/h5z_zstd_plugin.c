/* HDF5 dynamically loaded filter plugin for Zstandard (id 32015): put build/plugins (or
 * <prefix>/lib/kiln/hdf5-plugins) on HDF5_PLUGIN_PATH so h5py, h5dump etc. can read kiln's zstd datasets. */
#include <H5PLextern.h>

#include "h5z_zstd_filter.h"

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }

const void* H5PLget_plugin_info(void) { return &kiln_h5z_zstd_class; }
