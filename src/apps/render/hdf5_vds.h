// Virtual datasets over data files: the shards {stem}_batch_NNNN.h5 of a run with --images-per-file, and the
// pieces of a sharded job joined by kiln merge.
#pragma once

#include <string>
#include <vector>

#include "apps/render/hdf5_dataset.h"
#include "kiln/status.h"

namespace kiln {

// One file a virtual dataset maps, at the rows its first_index and count attributes name.
struct VdsSource {
  std::string path;
  hdf5::FileSummary summary;
  uint64_t bytes = 0;
};

// Writes the manifest {stem}.manifest.json and the virtual dataset file `out_path` over `sources` (complete data
// files), with `attributes` on its root. Sources are named relative to out_path's folder. Both files are written
// as .tmp, fsynced and renamed.
Status hdf5_vds_write(const std::string& out_path, const std::vector<VdsSource>& sources,
                      const hdf5::FileAttributes& attributes, const hdf5::FileShape& shape);

// Rebuilds manifest + VDS from the shards on disk. Refuses (IoError naming the shard) when a shard is missing,
// incomplete or made with different settings: a VDS would silently read zeros for a missing source.
// created_at: the VDS file's created_at attribute; empty takes the newest created_at of the shards.
// Both files are written as .tmp, fsynced and renamed.
// run_report / fallbacks: the finishing run's report, stored on the VDS file.
Status hdf5_vds_build(const std::string& out_path, const std::string& created_at = "",
                      const std::string& run_report = "", int64_t fallbacks = 0);

}  // namespace kiln
