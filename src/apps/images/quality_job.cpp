// The quality job: decode in batches, measure on the placed backend, judge against the thresholds, and write the
// JSON lines and the filtered copies crash-safely.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "apps/images/image_batches.h"
#include "apps/images/json_lines.h"
#include "apps/images/quality_preview.h"
#include "core/thread_pool.h"
#include "io/durable_file.h"
#include "io/job_parts.h"
#include "io/output_lock.h"
#include "kiln/apps/images.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;

// A name in the filter folder that no earlier file of this run took: name.ext, then name_2.ext, name_3.ext, ...
std::string filter_name(const std::string& path, std::set<std::string>* used) {
  const fs::path p(path);
  std::string name = p.filename().string();
  for (int k = 2; used->count(name) > 0; ++k) name = p.stem().string() + "_" + std::to_string(k) + p.extension().string();
  used->insert(name);
  return name;
}

nlohmann::json record_json(const QualityRecord& r) {
  nlohmann::json line;
  line["path"] = r.name;
  line["ok"] = r.ok;
  if (!r.ok) {
    line["error"] = r.error;
    return line;
  }
  line["pass"] = r.verdict.pass;
  line["reasons"] = r.verdict.reasons;
  line["blur"] = r.metrics.blur;
  line["brightness"] = r.metrics.brightness;
  line["contrast"] = r.metrics.contrast;
  line["sharpness"] = r.metrics.sharpness;
  line["score"] = r.metrics.score;
  line["backend"] = r.backend;
  return line;
}

}  // namespace

const ParamTable<QualityJobConfig>& quality_job_params() {
  static const ParamTable<QualityJobConfig> table = [] {
    using C = QualityJobConfig;
    ParamTable<C> t;
    t.include(quality_threshold_params(), [](C& c) -> QualityThresholds& { return c.thresholds; });
    t.add({.name = "bgr", .help = "In-memory 3/4-channel images are BGR(A) (files always decode as RGB)"},
          [](C& c) -> bool& { return c.bgr; });
    t.add({.name = "json", .help = "Write one JSON object per input to this file (JSON lines)"},
          [](C& c) -> std::string& { return c.json; });
    t.add({.name = "filter_to", .help = "Copy the passing files, byte for byte, into this folder"},
          [](C& c) -> std::string& { return c.filter_to; });
    t.add({.name = "preview",
           .help = "Write a PNG contact sheet here: images ranked by overall score (evenly spaced from the best to the "
                   "worst), each with its score, verdict and four metrics"},
          [](C& c) -> std::string& { return c.preview; });
    t.add({.name = "preview_images", .help = "Images on the --preview sheet", .min = 1, .max = 1000},
          [](C& c) -> int64_t& { return c.preview_images; });
    t.add({.name = "resume",
           .help = "Continue a killed run of the same job (its parts are beside the JSON lines file or filter folder)"},
          [](C& c) -> bool& { return c.resume; });
    file_job_params_add(t);
    return t;
  }();
  return table;
}

namespace {

// Images per part: quality measures an image in milliseconds, so parts are larger than the faces job's.
constexpr int64_t kPartMinImages = 128;

// What a resumed run must share with the killed one: the settings, the batches and the inputs.
std::string run_json(const QualityJobConfig& config, const ImageBatches& batches, int64_t unit) {
  nlohmann::json run;
  for (const auto& entry : quality_threshold_params().entries()) {
    std::visit([&](const auto& v) { run["thresholds"][entry.spec.name] = v; }, entry.get(&config.thresholds));
  }
  run["bgr"] = config.bgr;
  run["json"] = config.json;
  run["filter_to"] = config.filter_to;
  run["max_pixels"] = config.max_pixels;
  run["unit"] = unit;
  run["inputs"] = batches.count();
  run["inputs_crc32"] = batches.names_crc32();
  return run.dump();
}

QualityPreviewEntry preview_entry(int64_t index, const QualityMetrics& m, bool pass) {
  return {index,
          static_cast<float>(m.blur),
          static_cast<float>(m.brightness),
          static_cast<float>(m.contrast),
          static_cast<float>(m.sharpness),
          static_cast<float>(m.score),
          pass};
}

// A kept part's line as a preview entry (a resumed run measured it before it was killed); false for an unreadable
// input.
bool preview_entry_from_line(const std::string& line, int64_t index, QualityPreviewEntry* entry) {
  const nlohmann::json j = nlohmann::json::parse(line);
  if (!j.value("ok", false)) return false;
  QualityMetrics m;
  m.blur = j.at("blur").get<double>();
  m.brightness = j.at("brightness").get<double>();
  m.contrast = j.at("contrast").get<double>();
  m.sharpness = j.at("sharpness").get<double>();
  m.score = j.at("score").get<double>();
  *entry = preview_entry(index, m, j.at("pass").get<bool>());
  return true;
}

struct PartCounts {
  int64_t passed = 0;
  int64_t failed = 0;
  int64_t unreadable = 0;
  int64_t copied = 0;
};

}  // namespace

Result<QualityJobSummary> quality_job_run(const QualityJobConfig& config, const ImageInputs& inputs,
                                          const JobEvents<QualityRecord>& events) {
  KILN_TRY_ASSIGN(const ImageBatches batches, ImageBatches::make(inputs));
  if (config.json == "-") return invalid_argument("quality: " + kJsonLinesNotOnStdout);
  if (!config.filter_to.empty()) {
    if (!batches.from_files()) return invalid_argument("filter_to copies files: give image paths");
    std::error_code ec;
    fs::create_directories(config.filter_to, ec);
    if (ec) return io_error(config.filter_to + ": cannot create the folder: " + ec.message());
  }
  // The parts belong to the JSON lines file, else to the filter folder; a run that writes neither keeps nothing.
  const std::string base = !config.json.empty() ? config.json : config.filter_to;
  if (config.resume && base.empty()) return invalid_argument("resume: a run without json or filter_to keeps no parts");
  const auto started = std::chrono::steady_clock::now();
  const int64_t batch_size = std::max<int64_t>(1, config.exec.batch_size);
  const int64_t unit = part_unit_images(batch_size, kPartMinImages);
  std::optional<OutputLock> lock;
  std::optional<JobParts> parts;
  QualityJobSummary summary;
  summary.total = batches.count();
  std::set<std::string> used_names;
  std::vector<QualityPreviewEntry> preview_entries;  // one per measured input while a preview is asked for
  int64_t done_parts = 0;
  if (!base.empty()) {
    KILN_TRY(parent_folder_create(base));
    KILN_TRY_ASSIGN(lock, OutputLock::acquire(base));
    parts.emplace(base, "quality");
    std::vector<std::string> notes;
    KILN_TRY_ASSIGN(const std::vector<JobPart> kept, parts->open(run_json(config, batches, unit), config.resume, &notes));
    for (const std::string& note : notes) {
      if (events.log) events.log("kiln: warning: " + note);
    }
    for (const JobPart& part : kept) {
      try {
        summary.passed += part.header.at("passed").get<int64_t>();
        summary.failed += part.header.at("failed").get<int64_t>();
        summary.unreadable += part.header.at("unreadable").get<int64_t>();
        summary.copied += part.header.at("copied").get<int64_t>();
        for (const auto& name : part.header.at("copies")) used_names.insert(name.get<std::string>());
        if (!part.header.at("lines").is_array()) return unsupported_format(parts->dir() + ": a part has no lines");
        int64_t index = part.header.at("first").get<int64_t>();
        for (const auto& line : part.header.at("lines")) {
          QualityPreviewEntry entry;
          if (!config.preview.empty() && preview_entry_from_line(line.get<std::string>(), index, &entry)) {
            preview_entries.push_back(entry);
          }
          ++index;
        }
      } catch (const nlohmann::json::exception& e) {
        return unsupported_format(parts->dir() + ": a part has a bad header: " + e.what());
      }
    }
    done_parts = static_cast<int64_t>(kept.size());
    summary.resumed = std::min(batches.count(), done_parts * unit);
    // Copies and JSON lines a killed write left half made (only then: another job may be copying into the folder).
    if (config.resume && !config.filter_to.empty()) temp_files_remove(config.filter_to);
    if (config.resume && !config.json.empty()) {
      temp_files_remove(path_parent(config.json), fs::path(config.json).filename().string());
    }
  }

  ThreadPool pool(config.exec.threads);
  OpExecutor executor(exec_options_make(config.exec, &pool), events.log);
  QualityParams params;
  params.bgr = config.bgr;
  const DecodeOptions decode = file_job_decode_options(config);

  std::vector<QualityMetrics> metrics[2];  // per slot: two batches are measured at once
  const auto measure = [&](const DecodedBatch& batch, BatchSlot where, ExecReport* report) {
    std::vector<QualityMetrics>& measured = metrics[where.slot];
    measured.assign(static_cast<size_t>(batch.images.count()), QualityMetrics{});
    return executor.run(OpCall{OpKind::kQuality, &params, batch.images.view(), {}, measured.data()}, report);
  };
  PartCounts counts;
  int64_t input = 0;  // the input `judge` is called for
  std::vector<std::string> lines;
  std::vector<std::string> copies;
  const auto judge = [&](QualityRecord& record, int64_t k, int slot) -> Status {
    if (k < 0) {
      ++counts.unreadable;
    } else {
      record.metrics = metrics[slot][static_cast<size_t>(k)];
      record.verdict = quality_judge(record.metrics, config.thresholds);
      ++(record.verdict.pass ? counts.passed : counts.failed);
      if (!config.preview.empty()) preview_entries.push_back(preview_entry(input, record.metrics, record.verdict.pass));
      if (record.verdict.pass && !config.filter_to.empty()) {
        const std::string name = filter_name(record.name, &used_names);
        KILN_TRY(file_copy_atomic(record.name, (fs::path(config.filter_to) / name).string()));
        copies.push_back(name);
        ++counts.copied;
      }
    }
    lines.push_back(record_json(record).dump());
    ++input;
    return Status::ok();
  };
  // One run over the inputs not yet done; a part is written each time `unit` inputs (whole batches) are finished, so
  // the batches keep flowing across parts.
  int64_t part_first = done_parts * unit;
  input = part_first;
  const auto part_end = [&](int64_t first, int64_t n) -> Status {
    const int64_t done = first + n;
    if (done - part_first < unit && done < batches.count()) return Status::ok();
    if (parts) {
      JobPart part;
      part.header = {{"first", part_first},     {"passed", counts.passed}, {"failed", counts.failed},
                     {"unreadable", counts.unreadable}, {"copied", counts.copied}, {"copies", copies},
                     {"lines", lines}};
      KILN_TRY(parts->write(done_parts, part));
      ++done_parts;
    }
    summary.passed += counts.passed;
    summary.failed += counts.failed;
    summary.unreadable += counts.unreadable;
    summary.copied += counts.copied;
    counts = {};
    lines.clear();
    copies.clear();
    part_first = done;
    return Status::ok();
  };
  KILN_TRY(image_batches_run<QualityRecord>(batches, batch_size, decode, &pool, events, &summary.backend,
                                            &summary.placement, measure, judge, part_first, batches.count(),
                                            part_end));
  if (!config.json.empty()) {
    JsonLines json;
    KILN_TRY(json.open(config.json));
    for (int64_t k = 0; k < done_parts; ++k) {
      KILN_TRY_ASSIGN(const JobPart part, parts->read(k));
      for (const auto& line : part.header.at("lines")) {
        if (!line.is_string()) return unsupported_format(parts->dir() + ": a part holds a line that is not text");
        json.write_line(line.get<std::string>());
      }
    }
    KILN_TRY(json.commit());
  }
  if (!config.preview.empty()) {
    KILN_TRY(quality_preview_write(config.preview, std::move(preview_entries), batches, config.preview_images, decode,
                                   config.bgr)
                 .status());
  }
  if (parts) KILN_TRY(parts->remove());
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  summary.fallbacks = executor.fallbacks();
  summary.fallback_events = executor.events();
  return summary;
}

}  // namespace kiln
