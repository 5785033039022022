#include "apps/segment/segment_piece.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/crc32.h"
#include "io/durable_file.h"

namespace kiln {

std::string segment_piece_path(const std::string& output_dir, const Shard& shard) {
  return piece_path((std::filesystem::path(output_dir) / "segment.json").string(), shard);
}

std::string segment_settings_json(const SegmentJobConfig& config) {
  // Where, how fast and which piece do not change the outputs.
  static const char* const kNotContent[] = {"output_dir", "threads",     "batch_size",   "mode",
                                            "provider",   "hw_decode",   "max_delay_us", "fallback_on_error",
                                            "shard",      "shard_count", "resume"};
  nlohmann::json settings;
  for (const auto& entry : segment_job_params().entries()) {
    if (std::find(std::begin(kNotContent), std::end(kNotContent), entry.spec.name) != std::end(kNotContent)) continue;
    std::visit([&](const auto& v) { settings[entry.spec.name] = v; }, entry.get(&config));
  }
  return settings.dump();
}

std::string segment_inputs_crc32(const std::vector<std::string>& inputs) {
  Crc32 names;
  for (const std::string& name : inputs) names.update(name.data(), name.size() + 1);
  return names.hex();
}

Status segment_piece_write(const std::string& path, const Shard& shard, const IndexRange& range,
                           const std::string& settings, const std::vector<std::string>& all_inputs,
                           const SegmentJobSummary& summary) {
  nlohmann::json record;
  record["format"] = "kiln-segment-piece";
  record["shard_index"] = shard.index;
  record["shard_count"] = shard.count;
  record["first"] = range.first;
  record["count"] = range.count;
  record["total"] = static_cast<int64_t>(all_inputs.size());
  record["inputs_crc32"] = segment_inputs_crc32(all_inputs);
  record["complete"] = true;
  record["settings"] = nlohmann::json::parse(settings);
  nlohmann::json streams = nlohmann::json::array();
  for (size_t i = 0; i < summary.streams.size(); ++i) {
    const SegmentStreamSummary& s = summary.streams[i];
    const size_t input = static_cast<size_t>(range.first) + i;
    streams.push_back({{"input", input < all_inputs.size() ? all_inputs[input] : s.input},
                       {"output", std::filesystem::path(s.output).filename().string()},
                       {"frames", s.frames},
                       {"written", s.written},
                       {"dropped", s.dropped},
                       {"foreground", s.foreground},
                       {"errors", s.errors}});
  }
  record["streams"] = std::move(streams);
  record["seconds"] = summary.seconds;
  return file_write_atomic(path, record.dump(2) + "\n");
}

}  // namespace kiln
