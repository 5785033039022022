// Shard mode output: checks the shards {stem}_batch_NNNN.h5 of `out_path`, writes the manifest
// {stem}.manifest.json and the virtual dataset file `out_path` joining images, sequences, index and labels.
#pragma once

#include <string>

#include "kiln/status.h"

namespace kiln {

// Rebuilds manifest + VDS from the shards on disk. Refuses (IoError naming the shard) when a shard is missing,
// incomplete or made with different settings: a VDS would silently read zeros for a missing source.
// created_at: the VDS file's created_at attribute; empty takes the newest created_at of the shards.
// Both files are written as .tmp, fsynced and renamed.
// run_report / fallbacks: the finishing run's report, stored on the VDS file.
Status hdf5_vds_build(const std::string& out_path, const std::string& created_at = "",
                      const std::string& run_report = "", int64_t fallbacks = 0);

}  // namespace kiln
