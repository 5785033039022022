/* placeholder until the HDF5 helper lands the filter */
int kiln_h5z_zstd_placeholder;
