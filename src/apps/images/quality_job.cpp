// The quality job: decode in batches, measure on the placed backend, judge against the thresholds, and write the
// JSON lines and the filtered copies crash-safely.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "apps/images/image_batches.h"
#include "core/thread_pool.h"
#include "apps/images/json_lines.h"
#include "io/durable_file.h"
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
    file_job_params_add(t);
    return t;
  }();
  return table;
}

Result<QualityJobSummary> quality_job_run(const QualityJobConfig& config, const ImageInputs& inputs,
                                          const JobEvents<QualityRecord>& events) {
  KILN_TRY_ASSIGN(const ImageBatches batches, ImageBatches::make(inputs));
  if (!config.filter_to.empty()) {
    if (!batches.from_files()) return invalid_argument("filter_to copies files: give image paths");
    std::error_code ec;
    fs::create_directories(config.filter_to, ec);
    if (ec) return io_error(config.filter_to + ": cannot create the folder: " + ec.message());
  }
  JsonLines json;
  if (!config.json.empty()) KILN_TRY(json.open(config.json));

  const auto started = std::chrono::steady_clock::now();
  ThreadPool pool(config.exec.threads);
  OpExecutor executor(exec_options_make(config.exec, &pool), events.log);
  QualityParams params;
  params.bgr = config.bgr;
  const DecodeOptions decode = file_job_decode_options(config);
  QualityJobSummary summary;
  summary.total = batches.count();
  std::set<std::string> used_names;

  std::vector<QualityMetrics> metrics;
  const auto measure = [&](const DecodedBatch& batch, ExecReport* report) {
    metrics.assign(static_cast<size_t>(batch.images.count()), QualityMetrics{});
    return executor.run(OpCall{OpKind::kQuality, &params, batch.images.view(), {}, metrics.data()}, report);
  };
  const auto judge = [&](QualityRecord& record, int64_t k) -> Status {
    if (k < 0) {
      ++summary.unreadable;
    } else {
      record.metrics = metrics[static_cast<size_t>(k)];
      record.verdict = quality_judge(record.metrics, config.thresholds);
      ++(record.verdict.pass ? summary.passed : summary.failed);
      if (record.verdict.pass && !config.filter_to.empty()) {
        KILN_TRY(file_copy_atomic(record.name,
                                  (fs::path(config.filter_to) / filter_name(record.name, &used_names)).string()));
        ++summary.copied;
      }
    }
    json.write(record_json(record));
    return Status::ok();
  };
  KILN_TRY(image_batches_run<QualityRecord>(batches, config.exec.batch_size, decode, &pool, events, &summary.backend,
                                            &summary.placement, measure, judge));
  KILN_TRY(json.commit());
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  summary.fallbacks = executor.fallbacks();
  summary.fallback_events = executor.events();
  return summary;
}

}  // namespace kiln
