// kiln render, end to end: series -> windows -> placement -> render + encode workers -> one ordered writer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/render/image_sink.h"
#include "kiln/apps/render.h"
#include "kiln/device.h"
#include "kiln/exec.h"
#include "kiln/ops/render.h"
#include "kiln/status.h"

namespace kiln {

struct RenderJobConfig {
  SeriesSource input;
  std::shared_ptr<const Series> series;  // an in-memory series (Python callers); takes precedence over input
  bool demo = false;
  int64_t demo_points = 10099;
  WindowSpec windows;
  RenderParams render;
  int32_t dpi = 100;  // stored in the resolution attribute; pixels are given directly
  OutputSpec output;
  ExecMode mode = ExecMode::kAuto;
  std::optional<BackendKind> gpu_only;  // GPU_BACKEND=cuda|opencl: consider only this GPU backend
  std::vector<std::string> notes;       // messages from configuration (e.g. GPU_BACKEND=rocm mapped to OpenCL)
  int64_t batch_size = 1024;  // images per write batch (and per GPU launch once GPU backends exist)
  int32_t threads = 0;        // 0 = all hardware threads
  bool fallback_on_error = true;
  std::string preview_path;   // optional PNG grid of the first images
  int32_t preview_count = 16;

  // Every setting that determines the output (not threads, batch size or mode), as JSON.
  std::string output_config_json() const;
};

struct RenderProgress {
  int64_t done = 0;     // images durable (including resumed ones)
  int64_t resumed = 0;  // images that were already there when this run started
  int64_t total = 0;
  double seconds = 0;
  std::string backend;
};

struct RenderJobSummary {
  int64_t images = 0;
  int64_t rendered = 0;       // images rendered by this run (images - resumed)
  int64_t resumed_from = 0;
  int64_t skipped_nonfinite = 0;
  int64_t dropped_no_future = 0;
  double seconds = 0;
  uint64_t output_bytes = 0;  // encoded image bytes of the whole output (including resumed units)
  uint64_t raw_bytes = 0;     // uncompressed bytes of the same images
  std::string backend;
  std::string placement_reason;
  std::string output;
  int32_t threads = 0;
  int64_t fallbacks = 0;              // fallback events (batch halvings, moves to the CPU)
  std::vector<std::string> fallback_events;  // each kind once, with its reason
  std::string run_report;             // JSON stored with the output
  std::string stage_table;            // per-stage pipeline statistics, bottleneck named
};

using ProgressFn = std::function<void(const RenderProgress&)>;

// `log` receives one line per notable event (placement, each kind of fallback); it may be called from workers.
Result<RenderJobSummary> render_job_run(const RenderJobConfig& config, const ProgressFn& progress = {},
                                        const LogFn& log = {});

}  // namespace kiln
