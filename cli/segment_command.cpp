// kiln segment: person segmentation of videos, capture devices and image sequences (the segment job): a mask,
// alpha, composite or background-blurred video per input, or the probabilities as arrays, and a summary with
// frames/s, latency percentiles, per-stage busy shares and the bottleneck.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/job_cli.h"
#if KILN_HAS_SEGMENT
#include "kiln/apps/segment.h"
#endif

namespace kiln::cli {

#if KILN_HAS_SEGMENT
namespace {

// "frames 120/300, 57.3 fps, ETA 3 s" on stderr at most twice a second.
class ProgressLine {
 public:
  void update(int64_t written, int64_t expected, bool estimated) {
    const auto now = std::chrono::steady_clock::now();
    if ((estimated || written < expected) && now - m_last < std::chrono::milliseconds(500)) return;
    m_last = now;
    const double seconds = std::chrono::duration<double>(now - m_start).count();
    const double fps = seconds > 0 ? static_cast<double>(written) / seconds : 0;
    if (expected > 0 && fps > 0) {
      std::fprintf(stderr, "frames %lld/%s%lld, %.1f fps, ETA %s%.0f s\n", static_cast<long long>(written),
                   estimated ? "~" : "", static_cast<long long>(expected), fps, estimated ? "~" : "",
                   static_cast<double>(expected - written) / fps);
    } else {
      std::fprintf(stderr, "frames %lld, %.1f fps\n", static_cast<long long>(written), fps);
    }
  }

 private:
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point m_last{};
};

void summary_print(const SegmentJobSummary& s) {
  for (const SegmentStreamSummary& st : s.streams) {
    std::printf("%s -> %s: %lld frames, %lld written, %lld dropped, person %.1f%% of pixels\n", st.input.c_str(),
                st.output.c_str(), static_cast<long long>(st.frames), static_cast<long long>(st.written),
                static_cast<long long>(st.dropped), 100.0 * st.foreground);
    std::printf("  decode: %s; encode: %s\n", st.decode.c_str(), st.encode.c_str());
    if (st.device_frames > 0) {
      std::printf("  frames on the device from decode to the model: %lld of %lld\n",
                  static_cast<long long>(st.device_frames), static_cast<long long>(st.written));
    }
    if (st.device_composites > 0) {
      std::printf("  composites blended on the device: %lld of %lld\n", static_cast<long long>(st.device_composites),
                  static_cast<long long>(st.written));
    }
    if (st.error_count > 0) {
      std::printf("  damaged input: %lld problems, the frames that decoded were processed:\n",
                  static_cast<long long>(st.error_count));
    }
    for (const std::string& e : st.errors) std::printf("    %s\n", e.c_str());
  }
  std::printf("Time: %.2f s, %.1f frames/s, %.2f frames per inference run\n", s.seconds, s.fps, s.batch_mean);
  std::printf("Warm-up: model and inputs opened in %.2f s, first frame written after %.2f s; steady %.1f frames/s\n",
              s.open_s, s.first_frame_s, s.steady_fps);
  if (s.seconds > 0 && s.fps > 0) {
    std::printf("CPU: %.2f s (user + system, the whole process), %.1f ms per frame, %.2f cores busy\n", s.cpu_s,
                1e3 * s.cpu_s / (s.fps * s.seconds), s.cpu_s / s.seconds);
  }
  std::printf("Batching: at most %lld frames per run at the end", static_cast<long long>(s.batch_limit));
  if (s.infer.oom_halvings > 0) {
    std::printf("; %lld batch%s ran out of memory and %s run in halves (%lld frames fit)",
                static_cast<long long>(s.infer.oom_halvings), s.infer.oom_halvings == 1 ? "" : "es",
                s.infer.oom_halvings == 1 ? "was" : "were", static_cast<long long>(s.infer.batch_limit));
  }
  std::printf("\n");
  std::printf("Latency (arrived -> encoded): p50 %.1f ms, p95 %.1f ms, p99 %.1f ms\n", s.latency_p50_ms,
              s.latency_p95_ms, s.latency_p99_ms);
  std::printf("Stages:");
  for (const SegmentStageSummary& stage : s.stages) {
    std::printf(" %s %.0f%% (%.2f s on %d thread%s)", stage.name.c_str(), stage.busy_percent, stage.busy_s,
                stage.threads, stage.threads == 1 ? "" : "s");
  }
  std::printf("\nBottleneck: %s\n", s.bottleneck.c_str());
  std::printf("Inference: %s (%s); preprocess: %s; matte: %s; model input: %s; probabilities: %s\n",
              s.infer.provider.c_str(), s.infer.placement.c_str(), s.preprocess.c_str(), s.matte.c_str(),
              s.model_input.c_str(), s.probabilities.c_str());
  for (const std::string& f : s.infer.fallbacks) std::printf("  fallback: %s\n", f.c_str());
  std::printf("Pools (high-water marks):");
  for (const SegmentPoolSummary& p : s.pools) {
    if (p.unit == "bytes") {
      std::printf("\n  %s: %.1f MB held at most", p.name.c_str(), static_cast<double>(p.peak) / 1e6);
      if (p.limit > 0) std::printf(" of %.1f MB", static_cast<double>(p.limit) / 1e6);
      std::printf(" (%lld blocks allocated, %lld reused)", static_cast<long long>(p.allocations),
                  static_cast<long long>(p.reuses));
    } else {
      std::printf("\n  %s: %lld of %lld", p.name.c_str(), static_cast<long long>(p.peak),
                  static_cast<long long>(p.limit));
    }
  }
  std::printf("\n");
  if (s.iou >= 0) std::printf("IoU against the reference: %.3f\n", s.iou);
  for (const SegmentTargetCheck& t : s.targets) {
    std::printf("Target %s: %s (%s)\n", t.name.c_str(), t.met ? "met" : "NOT met", t.detail.c_str());
  }
}

}  // namespace

Runner segment_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("segment", "Segment the people in videos: a mask, alpha, composite or blur video");
  auto inputs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("inputs", *inputs, "Video files, capture devices (/dev/video0), image folders or globs")
      ->required();
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("-q,--quiet", *quiet, "No progress output");
  auto config_path = std::make_shared<std::string>();
  cmd->add_option("--config", *config_path,
                  "The predecessor's gpu_config.yaml (accepted unchanged; flags and the environment win over it)");
  auto latency = std::make_shared<bool>(false);
  auto throughput = std::make_shared<bool>(false);
  auto* lat = cmd->add_flag("--latency", *latency, "The same as --pipeline latency");
  cmd->add_flag("--throughput", *throughput, "The same as --pipeline throughput")->excludes(lat);
  auto flags = std::make_shared<CliParams>(cmd, segment_job_params(),
                                           std::map<std::string, std::string>{{"output_dir", "-o"}});
  return [inputs, quiet, config_path, latency, throughput, flags] {
    SegmentJobConfig config;
    if (!config_path->empty()) {
      std::vector<std::string> notes;
      if (Status s = segment_config_apply_yaml(*config_path, &config, &notes); !s.is_ok()) return exit_with(s);
      if (!*quiet) {
        for (const std::string& n : notes) std::fprintf(stderr, "%s\n", n.c_str());
      }
    }
    if (Status s = job_configure(*flags, &config, &config.exec, std::nullopt, *quiet); !s.is_ok()) return exit_with(s);
    if (*latency) config.pipeline = "latency";
    if (*throughput) config.pipeline = "throughput";
    const bool verbose = !*quiet;
    auto line = std::make_shared<ProgressLine>();
    const SegmentProgressFn on_progress = [verbose, line](int64_t written, int64_t expected, bool estimated) {
      if (verbose) line->update(written, expected, estimated);
    };
    const LogFn log = [verbose](const std::string& text) {
      if (verbose || text.rfind("kiln: warning:", 0) == 0) std::fprintf(stderr, "%s\n", text.c_str());
    };
    auto result = segment_job_run(config, *inputs, on_progress, log);
    if (!result.is_ok()) return exit_with(result.status());
    summary_print(result.value());
    return 0;
  };
}
#else
Runner segment_command_add(CLI::App& app) {
  app.add_subcommand("segment", "Segment people in videos (this kiln is built without ONNX Runtime or FFmpeg)")
      ->allow_extras();
  return [] {
    return exit_with(Status(Errc::kNotImplemented, "this kiln is built without ONNX Runtime or FFmpeg (see make deps)"));
  };
}
#endif

}  // namespace kiln::cli
