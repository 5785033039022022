// The segment job: output names, the lock and the parts of a resumable run around segment_run's pipeline, and the
// pieces of a sharded job.
#include <atomic>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "apps/segment/frame_source.h"
#include "apps/segment/segment_parts.h"
#include "apps/segment/segment_piece.h"
#include "apps/segment/segment_run.h"
#include "io/durable_file.h"
#include "io/output_lock.h"
#include "kiln/apps/segment.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;

const char* output_extension(SegmentOutput kind) {
  switch (kind) {
    case SegmentOutput::kAlpha: return ".webm";
    case SegmentOutput::kNpy: return ".npy";
    case SegmentOutput::kH5: return ".h5";
    default: return ".mp4";
  }
}

// -o names the file itself for one input when it has an extension; otherwise it is a folder with one output per
// input, named after the input (a clash gets -1, -2 ...).
Result<std::vector<std::string>> output_paths(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                              SegmentOutput kind) {
  if (config.output_dir.empty()) return invalid_argument("segment: give an output (-o FILE or FOLDER)");
  std::vector<std::string> paths;
  const fs::path out(config.output_dir);
  if (inputs.size() == 1 && out.has_extension() && !fs::is_directory(out)) {
    paths.push_back(config.output_dir);
  } else {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) return io_error(config.output_dir + ": cannot create the folder: " + ec.message());
    std::set<std::string> taken;
    for (const std::string& input : inputs) {
      fs::path in(input);
      std::string stem = frame_source_is_sequence(input) ? in.parent_path().filename().string() : in.stem().string();
      if (fs::is_directory(in)) stem = fs::absolute(in).lexically_normal().filename().string();
      if (stem.empty() || stem == "." || stem == "/") stem = "sequence";
      std::string name = stem + output_extension(kind);
      for (int k = 1; taken.count(name) != 0; ++k) name = stem + "-" + std::to_string(k) + output_extension(kind);
      taken.insert(name);
      paths.push_back((out / name).string());
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::error_code ec;
    if (fs::exists(inputs[i], ec) && fs::exists(paths[i], ec) && fs::equivalent(inputs[i], paths[i], ec)) {
      return invalid_argument(paths[i] + ": the output would overwrite its input");
    }
  }
  return paths;
}

// What a resumed run must share with the killed one: the settings that decide the outputs, and the inputs.
std::string run_json(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs) {
  nlohmann::json run;
  run["settings"] = nlohmann::json::parse(segment_settings_json(config));
  run["inputs"] = inputs;
  run["outputs"] = outputs;
  return run.dump();
}

// Inputs [range) of `inputs` (outputs alike), but for those a killed run finished (`kept`, whose summaries go into
// the result in input order), through one pipeline run that records each output as it completes.
Result<SegmentJobSummary> segment_range_run(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& outputs, const IndexRange& range,
                                            const std::string& base, const SegmentProgressFn& on_progress,
                                            const LogFn& log) {
  KILN_TRY_ASSIGN(OutputLock lock, OutputLock::acquire(base));
  SegmentParts parts(base);
  std::vector<std::string> notes;
  const auto slice = [&](const std::vector<std::string>& all) {
    return std::vector<std::string>(all.begin() + range.first, all.begin() + range.end());
  };
  KILN_TRY_ASSIGN(const auto kept, parts.open(run_json(config, slice(inputs), slice(outputs)), config.resume, &notes));
  for (const std::string& note : notes) {
    if (log) log("kiln: warning: " + note);
  }
  std::vector<int64_t> todo;  // indexes in the range
  for (int64_t i = 0; i < range.count; ++i) {
    if (kept.count(i) == 0) todo.push_back(i);
  }
  if (log && !kept.empty()) {
    log("Resuming: " + std::to_string(kept.size()) + " of " + std::to_string(range.count) +
        " outputs were finished by the killed run");
  }
  SegmentJobSummary summary;
  std::vector<std::unique_ptr<SegmentPreviewStream>> previews;  // one per input run (config.preview)
  if (!todo.empty()) {
    std::vector<std::string> run_inputs, run_outputs;
    for (const int64_t i : todo) {
      run_inputs.push_back(inputs[static_cast<size_t>(range.first + i)]);
      run_outputs.push_back(outputs[static_cast<size_t>(range.first + i)]);
      // What a killed write of this output left (the lock keeps other writers of it away).
      temp_files_remove(path_parent(run_outputs.back()), fs::path(run_outputs.back()).filename().string());
    }
    std::atomic<int64_t> finished{0};
    auto result = segment_streams_run(config, run_inputs, run_outputs, on_progress, log,
                                      [&](size_t k, const SegmentStreamSummary& stream) {
                                        KILN_TRY(parts.output_done(todo[k], stream));
                                        ++finished;
                                        return Status::ok();
                                      },
                                      &previews);
    if (!result.is_ok()) {
      if (kept.empty() && finished == 0) (void)parts.remove();  // nothing finished: nothing to resume
      return result.status();
    }
    summary = std::move(result).value();
  }
  // Every stream in input order, the kept ones included.
  std::vector<SegmentStreamSummary> streams;
  size_t next = 0;
  for (int64_t i = 0; i < range.count; ++i) {
    const auto found = kept.find(i);
    streams.push_back(found != kept.end() ? found->second : summary.streams[next++]);
  }
  summary.streams = std::move(streams);
  if (!config.preview.empty()) {
    std::vector<SegmentPreviewInput> shown;
    for (int64_t i = 0, run = 0; i < range.count; ++i) {
      const std::string& input = inputs[static_cast<size_t>(range.first + i)];
      if (kept.count(i) > 0) {
        shown.push_back({input, nullptr, "finished by the killed run this one resumed (not shown)"});
      } else {
        shown.push_back({input, previews[static_cast<size_t>(run++)].get(), ""});
      }
    }
    KILN_TRY(segment_preview_write(config.preview, shown, config.preview_frames).status());
  }
  KILN_TRY(parts.remove());
  return summary;
}

}  // namespace

Result<SegmentJobSummary> segment_job_run(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                          const SegmentProgressFn& on_progress, const LogFn& log) {
  KILN_TRY_ASSIGN(const Shard shard, shard_resolve(config.shard, env_lookup_process));
  std::error_code ec;
  if (shard.is_piece() && fs::path(config.output_dir).has_extension() && !fs::is_directory(config.output_dir, ec)) {
    return invalid_argument(shard.source + ": a piece of a sharded segment job writes into a folder (-o out/)");
  }
  if (inputs.empty()) return invalid_argument("segment: no input");
  // Output names come from the whole list, so that every piece names its videos as a single run would.
  KILN_TRY_ASSIGN(const std::vector<std::string> outputs, output_paths(config, inputs, config.output));
  const int64_t total = static_cast<int64_t>(inputs.size());
  if (!shard.is_piece()) {
    // The parts and the lock sit beside the output folder (or file): "out.parts", "out.lock".
    std::string base = fs::path(config.output_dir).lexically_normal().string();
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    return segment_range_run(config, inputs, outputs, IndexRange{0, total}, base, on_progress, log);
  }
  const IndexRange range = shard_range(shard.index, shard.count, total);
  if (log) {
    log("Segmenting " + shard.label() + " (" + shard.source + "): inputs " + std::to_string(range.first) + ".." +
        std::to_string(range.end() - 1) + " of " + std::to_string(total));
  }
  // A record left by an earlier run of this piece is void until this run's outputs are complete; the piece's parts
  // and lock go beside it, apart from the other pieces writing into the same folder.
  const std::string record = segment_piece_path(config.output_dir, shard);
  fs::remove(record, ec);
  if (ec) return io_error(record + ": cannot remove the earlier record: " + ec.message());
  SegmentJobSummary summary;
  SegmentJobConfig piece_config = config;
  if (!config.preview.empty()) piece_config.preview = piece_path(config.preview, shard);  // each piece its own
  if (range.count > 0) {
    KILN_TRY_ASSIGN(summary, segment_range_run(piece_config, inputs, outputs, range, record, on_progress, log));
  }
  KILN_TRY(segment_piece_write(record, shard, range, segment_settings_json(config), inputs, summary));
  return summary;
}

}  // namespace kiln
