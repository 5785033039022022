// kiln merge for segment pieces: each piece's record ({out}/segment.shard-I-of-N.json, written once its videos were
// complete) -> one manifest of every input's output, after checking that every piece and every output is there.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/durable_file.h"
#include "kiln/apps/merge.h"
#include "kiln/scale.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

struct SegmentPiece {
  PieceFacts facts;
  nlohmann::json record;
};

// A record that is valid JSON but of other types is reported like any other bad piece (json's accessors throw).
void record_check(const std::string& path, SegmentPiece* piece);

SegmentPiece piece_read(const std::string& path) {
  SegmentPiece piece;
  try {
    record_check(path, &piece);
  } catch (const nlohmann::json::exception& e) {
    piece.facts.problems.push_back(std::string("not a kiln segment piece record (") + e.what() + ")");
  }
  return piece;
}

void record_check(const std::string& path, SegmentPiece* out) {
  SegmentPiece& piece = *out;
  piece.facts = piece_facts_from_name(path);
  std::ifstream in(path, std::ios::binary);
  piece.record = nlohmann::json::parse(in, nullptr, false);
  const nlohmann::json& r = piece.record;
  if (!in.good() && !in.eof()) {
    piece.facts.problems.push_back("unreadable");
    return;
  }
  const auto is_int = [&](const char* key) { return r.contains(key) && r[key].is_number_integer(); };
  if (r.is_discarded() || !r.is_object() || r.value("format", "") != "kiln-segment-piece" || !is_int("shard_index") ||
      !is_int("shard_count") || !is_int("first") || !is_int("count") || !is_int("total") ||
      !r.contains("streams") || !r["streams"].is_array() || !r.contains("settings") ||
      !r.contains("complete") || !r["complete"].is_boolean() || !r.contains("inputs_crc32") ||
      !r["inputs_crc32"].is_string()) {
    piece.facts.problems.push_back("not a kiln segment piece record");
    return;
  }
  piece.facts.shard_index = r["shard_index"].get<int64_t>();
  piece.facts.shard_count = r["shard_count"].get<int64_t>();
  piece.facts.first = r["first"].get<int64_t>();
  piece.facts.count = r["count"].get<int64_t>();
  piece.facts.total = r["total"].get<int64_t>();
  piece.facts.complete = r["complete"].get<bool>();
  if (static_cast<int64_t>(r["streams"].size()) != piece.facts.count) {
    piece.facts.problems.push_back("lists " + std::to_string(r["streams"].size()) + " videos, its range " +
                                   std::to_string(piece.facts.count));
  }
  // Every output the piece made must still be there, beside the record.
  for (const auto& stream : r["streams"]) {
    if (!stream.is_object() || !stream.contains("output") || !stream["output"].is_string() ||
        !stream.value("written", nlohmann::json(0)).is_number_integer()) {
      piece.facts.problems.push_back("a stream of its record is malformed");
      return;
    }
    const std::string output = stream["output"].get<std::string>();
    const fs::path file = fs::path(path).parent_path() / output;
    std::error_code ec;
    if (output.empty() || !fs::is_regular_file(file, ec) || fs::file_size(file, ec) == 0) {
      piece.facts.problems.push_back("its output " + file.string() + " is missing or empty");
    }
  }
}

}  // namespace

Result<MergeSummary> segment_merge(const std::vector<std::string>& paths, const MergeConfig& config,
                                   std::vector<std::string>* problems) {
  if (fs::path(config.output).extension() != ".json") {
    return invalid_argument("segment pieces are merged into a manifest: -o name.json");
  }
  std::vector<SegmentPiece> pieces;
  for (const std::string& path : paths) pieces.push_back(piece_read(path));
  pieces_sort(&pieces);
  const SegmentPiece* reference = piece_first_readable(pieces);
  for (SegmentPiece& p : pieces) {
    if (!p.facts.problems.empty() || &p == reference) continue;
    if (p.record["settings"] != reference->record["settings"]) {
      p.facts.problems.push_back("made with other settings than " + reference->facts.path);
    } else if (p.record.value("inputs_crc32", "") != reference->record.value("inputs_crc32", "")) {
      p.facts.problems.push_back("made from another input list than " + reference->facts.path);
    }
  }
  *problems = pieces_check(pieces_facts(pieces));
  if (!problems->empty()) return pieces_refused(pieces.size(), problems->size());
  // The manifest names each output relative to itself, so the folder can move as a whole.
  const fs::path manifest_dir = fs::path(config.output).parent_path().empty() ? fs::path(".")
                                                                                : fs::path(config.output).parent_path();
  nlohmann::json manifest;
  manifest["format"] = "kiln-segment";
  manifest["settings"] = reference->record["settings"];
  nlohmann::json streams = nlohmann::json::array();
  int64_t frames = 0;
  for (const SegmentPiece& p : pieces) {  // in piece order: the input order
    for (nlohmann::json stream : p.record["streams"]) {
      std::error_code ec;
      const fs::path file = fs::path(p.facts.path).parent_path() / stream.value("output", "");
      const fs::path relative = fs::relative(file, manifest_dir, ec);
      stream["output"] = ec ? file.string() : relative.string();
      stream["piece"] = p.facts.shard_index;
      frames += stream.value("written", int64_t{0});
      streams.push_back(std::move(stream));
    }
  }
  manifest["totals"] = {{"videos", pieces.front().facts.total}, {"pieces", pieces.size()}, {"frames", frames}};
  manifest["streams"] = std::move(streams);
  KILN_TRY(parent_folder_create(config.output));  // only once the checks passed
  KILN_TRY(file_write_atomic(config.output, manifest.dump(2) + "\n"));

  MergeSummary summary;
  summary.kind = "segment";
  summary.pieces = static_cast<int64_t>(pieces.size());
  summary.items = pieces.front().facts.total;
  summary.output = config.output + " (manifest of " + std::to_string(summary.items) + " outputs, " +
                   std::to_string(frames) + " frames)";
  return summary;
}

}  // namespace kiln
