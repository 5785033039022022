// HDF5 input (series_hdf5.cpp, series_hdf5_table.cpp): the helpers both readers share, and the table reader.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>

#include "apps/render/series_panel.h"
#include "kiln/status.h"

namespace kiln {

// " (datasets: /a, /b)" or " (the file has no datasets)".
std::string hdf5_dataset_listing(hid_t file);
const char* hdf5_type_class_name(H5T_class_t cls);  // "integer", "compound", ...
// IoError when `values` items of `type` cannot be in the file (what dataset `ds` stores, allowing for compression),
// OutOfMemory when as many float32 would not fit in memory: checked before anything that size is allocated.
Status hdf5_declared_size_check(hid_t ds, hid_t type, uint64_t values, const std::string& where, uint64_t file_size);

// The rows of a table in an HDF5 file, read like a CSV's columns (same names, case-insensitive, same errors):
// `dataset` a 1-D compound dataset whose fields are the columns (a numpy structured array; a group holding a compound
// dataset `table`, as pandas' to_hdf(format="table") writes, counts as that dataset), or a group of 1-D datasets,
// one per column. nullopt when `dataset` is neither (series_load_hdf5 then reads it as one series).
Result<std::optional<CsvRows>> series_load_hdf5_rows(const std::string& path, const std::string& dataset,
                                                     const std::string& column, bool ohlc,
                                                     const std::string& volume_column, const CsvPanelColumns& panel);

}  // namespace kiln
