#include "apps/segment/segment_piece.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/durable_file.h"

namespace kiln {

std::string segment_piece_path(const std::string& output_dir, const Shard& shard) {
  return piece_path((std::filesystem::path(output_dir) / "segment.json").string(), shard);
}

std::string segment_settings_json(const SegmentJobConfig& config) {
  // Where, how fast and which piece do not change the outputs.
  static const char* const kNotContent[] = {"output_dir", "threads", "shard", "shard_count", "hw_decode"};
  nlohmann::json settings;
  for (const auto& entry : segment_job_params().entries()) {
    if (std::find(std::begin(kNotContent), std::end(kNotContent), entry.spec.name) != std::end(kNotContent)) continue;
    std::visit([&](const auto& v) { settings[entry.spec.name] = v; }, entry.get(&config));
  }
  return settings.dump();
}

Status segment_piece_write(const std::string& path, const Shard& shard, const IndexRange& range, int64_t total,
                           const std::string& settings, const std::vector<std::string>& inputs,
                           const SegmentJobSummary& summary) {
  nlohmann::json record;
  record["format"] = "kiln-segment-piece";
  record["shard_index"] = shard.index;
  record["shard_count"] = shard.count;
  record["first"] = range.first;
  record["count"] = range.count;
  record["total"] = total;
  record["complete"] = true;
  record["settings"] = nlohmann::json::parse(settings);
  nlohmann::json streams = nlohmann::json::array();
  for (size_t i = 0; i < summary.streams.size(); ++i) {
    const SegmentStreamSummary& s = summary.streams[i];
    streams.push_back({{"input", i < inputs.size() ? inputs[i] : s.input},
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
