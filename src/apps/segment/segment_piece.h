// A piece of a sharded segment job (kiln/scale.h): the record {out}/segment.shard-I-of-N.json a finished piece writes
// beside its videos, which kiln merge checks and joins into one manifest.
#pragma once

#include <string>
#include <vector>

#include "kiln/apps/segment.h"
#include "kiln/scale.h"

namespace kiln {

// The record's path in the output folder.
std::string segment_piece_path(const std::string& output_dir, const Shard& shard);
// The settings that decide the outputs, as JSON (pieces of one job must agree on them).
std::string segment_settings_json(const SegmentJobConfig& config);
// Written atomically once the piece's outputs are complete.
Status segment_piece_write(const std::string& path, const Shard& shard, const IndexRange& range, int64_t total,
                           const std::string& settings, const std::vector<std::string>& inputs,
                           const SegmentJobSummary& summary);

}  // namespace kiln
