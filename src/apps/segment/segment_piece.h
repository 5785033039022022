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
// CRC-32 of the whole input list, by name and order (pieces of one job were given the same list).
std::string segment_inputs_crc32(const std::vector<std::string>& inputs);
// Written atomically once the piece's outputs are complete. all_inputs: the whole job's list.
Status segment_piece_write(const std::string& path, const Shard& shard, const IndexRange& range,
                           const std::string& settings, const std::vector<std::string>& all_inputs,
                           const SegmentJobSummary& summary);

}  // namespace kiln
