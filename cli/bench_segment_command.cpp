// kiln bench segment: frames/s and latency (p50, p99) of the segment job per pipeline and batch size, on a video
// (--video, or one made here from real photographs: skimage's astronaut panning across a 1280 x 720 frame, then its
// rocket launch, H.264). The sequential-loop peer is bench/segment_peers.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/bench_commands.h"
#if KILN_HAS_SEGMENT
#include "io/video/photo_frames.h"
#include "kiln/apps/segment.h"
#include "kiln/codec.h"
#endif

namespace kiln::cli {

#if KILN_HAS_SEGMENT
namespace {

namespace fs = std::filesystem;

struct BenchSegmentArgs {
  std::string video;
  std::vector<int64_t> batch_sizes{1, 4, 8, 16};
  int32_t threads = 0;
  bool json = false;
  std::string plot;
};

Result<std::string> video_make(const fs::path& dir) {
  const std::string path = (dir / "bench_person.mp4").string();
  VideoWriterOptions o;
  o.width = 1280;
  o.height = 720;
  o.time_base = {1, 30};
  KILN_TRY_ASSIGN(auto writer, VideoWriter::open(path, o));
  int64_t pts = 0;
  KILN_TRY(photo_frames_write(*writer, "/usr/lib/python3/dist-packages/skimage/data/astronaut.png", 1280, 720, 90, 4,
                              &pts));
  KILN_TRY(photo_frames_write(*writer, "/usr/lib/python3/dist-packages/skimage/data/rocket.jpg", 1280, 720, 30, 4,
                              &pts));
  KILN_TRY(writer->finish());
  return path;
}

int bench_segment_run(const BenchSegmentArgs& args) {
  const fs::path dir = fs::temp_directory_path() / ("kiln_bench_segment_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string video = args.video;
  if (video.empty()) {
    auto made = video_make(dir);
    if (!made.is_ok()) {
      fs::remove_all(dir);
      return exit_with(made.status());
    }
    video = made.value();
  }
  nlohmann::json rows = nlohmann::json::array();
  const auto run = [&](const std::string& pipeline, int64_t batch) -> Status {
    SegmentJobConfig config;
    config.output_dir = (dir / "out.mp4").string();
    config.pipeline = pipeline;
    config.exec.batch_size = batch;
    config.exec.threads = args.threads;
    KILN_TRY_ASSIGN(const SegmentJobSummary s, segment_job_run(config, {video}));
    nlohmann::json row = {{"pipeline", pipeline},
                          {"batch_size", batch},
                          {"frames", s.streams[0].written},
                          {"dropped", s.streams[0].dropped},
                          {"fps", s.fps},
                          {"steady_fps", s.steady_fps},
                          {"first_frame_s", s.first_frame_s},
                          {"open_s", s.open_s},
                          {"latency_ms_p50", s.latency_p50_ms},
                          {"latency_ms_p99", s.latency_p99_ms},
                          {"batch_mean", s.batch_mean},
                          {"bottleneck", s.bottleneck},
                          {"provider", s.infer.provider}};
    if (!args.json) {
      std::printf("%-10s batch %2lld: %6.1f frames/s (steady %6.1f), p50 %6.1f ms, p99 %6.1f ms, dropped %lld, "
                  "bottleneck %s (%s)\n",
                  pipeline.c_str(), static_cast<long long>(batch), s.fps, s.steady_fps, s.latency_p50_ms,
                  s.latency_p99_ms, static_cast<long long>(s.streams[0].dropped), s.bottleneck.c_str(),
                  s.infer.provider.c_str());
    }
    rows.push_back(row);
    return Status::ok();
  };
  Status st;
  for (const int64_t b : args.batch_sizes) {
    if (st.is_ok()) st = run("throughput", b);
  }
  for (const int64_t b : {1, 2}) {
    if (st.is_ok()) st = run("latency", b);
  }
  fs::remove_all(dir);
  if (!st.is_ok()) return exit_with(st);
  const nlohmann::json out{{"video", video}, {"results", rows}};
  if (args.json) std::printf("%s\n", out.dump(2).c_str());
  return bench_plot_finish(out, args.plot, "kiln bench segment: frames/s per pipeline and batch size");
}

}  // namespace

Runner bench_segment_command_add(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("segment", "Frames/s and latency of kiln segment per pipeline and batch size");
  auto args = std::make_shared<BenchSegmentArgs>();
  cmd->add_option("--video", args->video, "Input video (default: made from real photos, 1280 x 720 H.264)");
  cmd->add_option("--batch-sizes", args->batch_sizes, "Throughput batch sizes")->expected(1, -1);
  cmd->add_option("--threads", args->threads, "CPU threads (0 = all cores)");
  cmd->add_flag("--json", args->json, "Print JSON");
  bench_plot_option_add(cmd, &args->plot);
  return [args] { return bench_segment_run(*args); };
}
#else
Runner bench_segment_command_add(CLI::App& bench) {
  bench.add_subcommand("segment", "Segment benchmark (this kiln is built without ONNX Runtime or FFmpeg)")
      ->allow_extras();
  return [] { return exit_with(Status(Errc::kNotImplemented, "this kiln is built without ONNX Runtime or FFmpeg")); };
}
#endif

}  // namespace kiln::cli
