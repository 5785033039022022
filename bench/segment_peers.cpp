// kiln segment against the straightforward sequential loop (the predecessor's design without its bugs): FFmpeg
// decode -> OpenCV resize and normalize -> ONNX Runtime on one frame -> probabilities resized to the frame and
// thresholded -> FFmpeg encode, one frame after the other. Both decode and encode through the same FFmpeg wrappers
// and settings (libx264 veryfast, CRF 20), so the difference is the pipeline. Also kiln --latency paced at the
// source's frame rate: its p99 latency against the loop's single-frame time. The three runs are repeated in
// rounds (loop, kiln --throughput, kiln --latency, then again): each ratio is taken within a round, so a slow spell
// of a shared machine weighs on both sides, and the medians over the rounds are reported with every round's value.
// Each side's CPU time per frame (user + system, the whole process) is reported beside its rate: on a loaded machine
// the rates swing with the other work, the CPU time much less.
//
//   segment_peers [--video person.mp4] [--threads 2] [--loop-threads N] [--repeats 3] [--json out.json]
// Without --video, a 1280 x 720 H.264 video of real photographs is made first (tools/video/make_person_video.py).
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>
#include <sched.h>
#include <sys/resource.h>

#include "bench_common.h"
#include "apps/bench/bench_stats.h"
#include "io/video/video_reader.h"
#include "io/video/video_writer.h"
#include "kiln/apps/segment.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// CPU seconds (user + system) of the whole process so far: around a run, what it cost the cores, which a loaded
// machine's other work does not add to (its wall time it does).
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct LoopResult {
  int64_t frames = 0;
  double seconds = 0;
  double compute_ms = 0;  // mean per frame: everything but decode and encode
  double frame_ms = 0;    // mean per frame, all of it
  double decode_ms = 0;   // mean per frame: FFmpeg's decode to RGB
  double model_ms = 0;    // mean per frame: ONNX Runtime's run alone
  double encode_ms = 0;   // mean per frame: FFmpeg's encode
  double cpu_ms = 0;      // CPU time (user + system, every thread) per frame
};

// The sequential loop; writes a 0/255 mask video like kiln segment's default output.
LoopResult sequential_loop(const std::string& video, const std::string& output, const kiln::PackagedModel& model,
                           int threads) {
  Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "peer");
  Ort::SessionOptions options;
  options.SetIntraOpNumThreads(threads);
  options.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_ALL);
  Ort::Session session(env, model.file.c_str(), options);
  Ort::AllocatorWithDefaultOptions allocator;
  const std::string in_name = session.GetInputNameAllocated(0, allocator).get();
  const std::string out_name = session.GetOutputNameAllocated(0, allocator).get();
  const char* ins[] = {in_name.c_str()};
  const char* outs[] = {out_name.c_str()};
  const auto memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);

  auto reader = kiln::VideoReader::open(video);
  if (!reader.is_ok()) throw std::runtime_error(reader.status().to_string());
  const kiln::VideoInfo info = reader.value()->info();
  kiln::VideoWriterOptions wo;
  wo.width = info.width;
  wo.height = info.height;
  wo.pixels = kiln::VideoPixels::kGray;
  wo.time_base = info.time_base;
  wo.frame_rate = info.frame_rate;
  auto writer = kiln::VideoWriter::open(output, wo);
  if (!writer.is_ok()) throw std::runtime_error(writer.status().to_string());

  LoopResult r;
  double compute = 0, decode = 0, model_run = 0, encode = 0;
  const double cpu0 = process_cpu_seconds();
  const auto t0 = Clock::now();
  for (;;) {
    kiln::VideoFrame frame;
    bool end = false;
    const auto d0 = Clock::now();
    if (!reader.value()->read(&frame, &end).is_ok() || end) break;
    decode += seconds_since(d0);
    const auto c0 = Clock::now();
    cv::Mat rgb(frame.rgb.height, frame.rgb.width, CV_8UC3, frame.rgb.pixels.data());
    cv::Mat resized, scaled;
    cv::resize(rgb, resized, cv::Size(model.input.width, model.input.height), 0, 0, cv::INTER_LINEAR);
    resized.convertTo(scaled, CV_32FC3, model.input.scale);
    cv::Mat blob = cv::dnn::blobFromImage(scaled);  // NCHW
    const int64_t shape[] = {1, 3, model.input.height, model.input.width};
    Ort::Value tensor = Ort::Value::CreateTensor<float>(memory, blob.ptr<float>(), blob.total(), shape, 4);
    const auto m0 = Clock::now();
    auto result = session.Run(Ort::RunOptions{nullptr}, ins, &tensor, 1, outs, 1);
    model_run += seconds_since(m0);
    float* prob = result[0].GetTensorMutableData<float>();
    cv::Mat small(model.input.height, model.input.width, CV_32F, prob), big, mask;
    cv::resize(small, big, cv::Size(info.width, info.height), 0, 0, cv::INTER_LINEAR);
    cv::threshold(big, big, 0.5, 255, cv::THRESH_BINARY);
    big.convertTo(mask, CV_8U);
    compute += seconds_since(c0);
    const kiln::ImageView view = kiln::image_view_packed(mask.data, info.width, info.height, 1, kiln::PixelType::kU8);
    const auto e0 = Clock::now();
    if (!writer.value()->write(view, frame.pts).is_ok()) throw std::runtime_error("encode failed");
    encode += seconds_since(e0);
    ++r.frames;
  }
  const auto f0 = Clock::now();
  if (!writer.value()->finish().is_ok()) throw std::runtime_error("finish failed");
  encode += seconds_since(f0);
  r.seconds = seconds_since(t0);
  const double cpu = process_cpu_seconds() - cpu0;
  const auto per_frame_ms = [&](double total) { return r.frames > 0 ? 1e3 * total / static_cast<double>(r.frames) : 0; };
  r.compute_ms = per_frame_ms(compute);
  r.frame_ms = per_frame_ms(r.seconds);
  r.decode_ms = per_frame_ms(decode);
  r.model_ms = per_frame_ms(model_run);
  r.encode_ms = per_frame_ms(encode);
  r.cpu_ms = per_frame_ms(cpu);
  return r;
}

// The loop on one core and one thread (the calling thread pinned to its first allowed CPU before anything opens,
// so that every thread FFmpeg or ONNX Runtime starts inherits it): what decode, the model and encode cost per frame
// when nothing else runs beside them.
LoopResult sequential_loop_one_core(const std::string& video, const std::string& output,
                                    const kiln::PackagedModel& model) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) throw std::runtime_error("sched_getaffinity failed");
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &allowed)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) throw std::runtime_error("sched_setaffinity failed");
  LoopResult r;
  try {
    r = sequential_loop(video, output, model, 1);
  } catch (...) {
    sched_setaffinity(0, sizeof(allowed), &allowed);
    throw;
  }
  sched_setaffinity(0, sizeof(allowed), &allowed);
  return r;
}

kiln::SegmentJobSummary kiln_run(const std::string& video, const std::string& output, const std::string& pipeline,
                                 int threads) {
  kiln::SegmentJobConfig config;
  config.output_dir = output;
  config.pipeline = pipeline;
  config.exec.mode = kiln::ExecMode::kCpu;
  config.exec.threads = threads;
  auto result = kiln::segment_job_run(config, {video});
  if (!result.is_ok()) throw std::runtime_error(result.status().to_string());
  return result.value();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln segment against a sequential decode -> preprocess -> infer -> threshold -> encode loop"};
  std::string video, json_path, plot_path;
  int threads = 2;
  int loop_threads = 0;
  int repeats = 3;
  double seconds = 2.0;
  app.add_option("--video", video, "Input video (default: made from real photos, 1280 x 720 H.264)");
  app.add_option("--seconds", seconds, "Seconds per photo of the made video");
  app.add_option("--threads", threads, "Threads for ONNX Runtime and kiln")->check(kiln::bench::positive());
  app.add_option("--loop-threads", loop_threads, "ONNX Runtime's intra-op threads in the loop (default: --threads)")
      ->check(kiln::bench::positive());
  app.add_option("--repeats", repeats, "Rounds of loop, kiln --throughput and kiln --latency; medians reported")
      ->check(kiln::bench::positive());
  app.add_option("--json", json_path, "Also write the results here");
  kiln::bench::plot_option_add(app, &plot_path);
  if (auto code = kiln::bench::args_parse(app, argc, argv)) return *code;
  if (loop_threads == 0) loop_threads = threads;

  const fs::path dir = fs::temp_directory_path() / ("kiln_segment_peers_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  if (video.empty()) {
    video = (dir / "person.mp4").string();
    const std::string cmd = "/usr/bin/python3 " + kiln::bench::shell_quote(std::string(KILN_SOURCE_DIR) +
                                                                           "/tools/video/make_person_video.py") +
                            " -o " + kiln::bench::shell_quote(video) + " --seconds " + std::to_string(seconds) +
                            " > /dev/null";
    if (std::system(cmd.c_str()) != 0) {
      std::fprintf(stderr, "segment_peers: could not make the test video (%s)\n", cmd.c_str());
      return 1;
    }
  }
  auto model = kiln::packaged_model("selfie");
  if (!model.is_ok()) {
    std::fprintf(stderr, "segment_peers: %s\n", model.status().to_string().c_str());
    return 1;
  }
  try {
    sequential_loop(video, (dir / "warm.mp4").string(), model.value(), loop_threads);  // page cache, ORT's first runs
    struct Round {
      LoopResult loop;
      kiln::SegmentJobSummary throughput, latency;
    };
    std::vector<Round> rounds;
    for (int r = 0; r < repeats; ++r) {
      Round round;
      round.loop = sequential_loop(video, (dir / "loop.mp4").string(), model.value(), loop_threads);
      round.throughput = kiln_run(video, (dir / "throughput.mp4").string(), "throughput", threads);
      round.latency = kiln_run(video, (dir / "latency.mp4").string(), "latency", threads);
      rounds.push_back(std::move(round));
    }
    std::vector<double> loop_fps, loop_frame_ms, loop_compute_ms, loop_cpu_ms, tp_cpu_ms, tp_fps, tp_p50, tp_p99,
        lat_fps, lat_p50, lat_p95, lat_p99, ratio_tp, ratio_lat;
    int64_t dropped = 0;
    for (const Round& r : rounds) {
      loop_fps.push_back(static_cast<double>(r.loop.frames) / r.loop.seconds);
      loop_frame_ms.push_back(r.loop.frame_ms);
      loop_compute_ms.push_back(r.loop.compute_ms);
      loop_cpu_ms.push_back(r.loop.cpu_ms);
      const double tp_frames = r.throughput.fps * r.throughput.seconds;
      tp_cpu_ms.push_back(tp_frames > 0 ? 1e3 * r.throughput.cpu_s / tp_frames : 0);
      tp_fps.push_back(r.throughput.fps);
      tp_p50.push_back(r.throughput.latency_p50_ms);
      tp_p99.push_back(r.throughput.latency_p99_ms);
      lat_fps.push_back(r.latency.fps);
      lat_p50.push_back(r.latency.latency_p50_ms);
      lat_p95.push_back(r.latency.latency_p95_ms);
      lat_p99.push_back(r.latency.latency_p99_ms);
      ratio_tp.push_back(r.throughput.fps / loop_fps.back());
      ratio_lat.push_back(r.latency.latency_p99_ms / r.loop.frame_ms);
      dropped = std::max(dropped, r.latency.streams[0].dropped);
    }
    // The work that no pipeline of these components avoids (decode, the model, encode; kiln's pre- and
    // post-processing left out as if free), each on one core, spread over `threads` cores with perfect scaling: the
    // frame rate no pipeline on this machine passes, and its ratio to the loop.
    const LoopResult one_core = sequential_loop_one_core(video, (dir / "one_core.mp4").string(), model.value());
    const double work_ms = one_core.decode_ms + one_core.model_ms + one_core.encode_ms;
    using kiln::bench::median_of;
    const char* const batch_why =
        "on the CPU provider one frame per inference run (segment_engine.cpp): ONNX Runtime's CPU kernels gain "
        "nothing from batching this small model (kiln bench segment: batch 1 the fastest, 5-15 % ahead of 8), and a "
        "batch holds the stages around it back; the frames overlap across the reader, inference and writer threads "
        "instead";
    const double throughput_ratio = median_of(ratio_tp);
    const double latency_ratio = median_of(ratio_lat);
    nlohmann::json out = {
        {"machine", kiln::bench::cpu_model()},
        {"commit", kiln::bench::git_commit()},
        {"video", video},
        {"frames", rounds[0].loop.frames},
        {"threads", threads},
        {"loop_threads", loop_threads},
        {"rounds", repeats},
        {"sequential_loop",
         {{"fps", median_of(loop_fps)}, {"fps_runs", loop_fps}, {"frame_ms", median_of(loop_frame_ms)},
          {"compute_ms", median_of(loop_compute_ms)}, {"cpu_ms", median_of(loop_cpu_ms)},
          {"cpu_ms_runs", loop_cpu_ms}}},
        {"one_core_work",
         {{"decode_ms", one_core.decode_ms}, {"model_ms", one_core.model_ms}, {"encode_ms", one_core.encode_ms},
          {"pre_post_ms", one_core.compute_ms - one_core.model_ms}, {"frame_ms", one_core.frame_ms},
          {"bound_fps", work_ms > 0 ? 1e3 * threads / work_ms : 0.0},
          {"bound_vs_loop", work_ms > 0 ? 1e3 * threads / work_ms / median_of(loop_fps) : 0.0},
          {"meaning", "decode + model + encode per frame on one core and one thread; bound_fps = threads cores of "
                      "that work scaling perfectly (this VM's own scaling is lower), so bound_vs_loop is the most "
                      "any pipeline of these components can reach against the loop"}}},
        {"kiln_throughput",
         {{"fps", median_of(tp_fps)}, {"fps_runs", tp_fps}, {"cpu_ms", median_of(tp_cpu_ms)},
          {"cpu_ms_runs", tp_cpu_ms},
          {"batch_mean", rounds[0].throughput.batch_mean}, {"batch_why", batch_why},
          {"bottleneck", rounds[0].throughput.bottleneck}, {"p50_ms", median_of(tp_p50)},
          {"p99_ms", median_of(tp_p99)}}},
        {"kiln_latency",
         {{"fps", median_of(lat_fps)}, {"dropped", dropped}, {"p50_ms", median_of(lat_p50)},
          {"p95_ms", median_of(lat_p95)}, {"p99_ms", median_of(lat_p99)}, {"p99_ms_runs", lat_p99}}},
        {"ratios",
         {{"throughput_vs_loop", throughput_ratio}, {"throughput_vs_loop_runs", ratio_tp},
          {"latency_p99_vs_loop_frame_time", latency_ratio}, {"latency_p99_vs_loop_frame_time_runs", ratio_lat}}},
        {"targets",
         {{"throughput_2x", throughput_ratio >= 2},
          {"throughput_2x_reachable", work_ms > 0 && 1e3 * threads / work_ms / median_of(loop_fps) >= 2},
          {"latency_p99_within_1_5x", latency_ratio <= 1.5 && dropped == 0}}}};
    for (const auto& stage : rounds[0].throughput.stages) {
      std::vector<double> busy;
      for (const Round& r : rounds) {
        for (const auto& other : r.throughput.stages) {
          if (other.name == stage.name) busy.push_back(other.busy_percent);
        }
      }
      out["kiln_throughput"]["busy_percent"][stage.name] = median_of(busy);
    }
    std::printf("%s\n", out.dump(2).c_str());
    if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
    if (kiln::bench::plot_write(out, plot_path, "segment_peers: frames/s, kiln segment and the sequential loop") != 0) {
      fs::remove_all(dir);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "segment_peers: %s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
  return 0;
}
