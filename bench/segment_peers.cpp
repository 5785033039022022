// kiln segment against the straightforward sequential loop (the predecessor's design without its bugs): FFmpeg
// decode -> OpenCV resize and normalize -> ONNX Runtime on one frame -> probabilities resized to the frame and
// thresholded -> FFmpeg encode, one frame after the other. Both decode and encode through the same FFmpeg wrappers
// and settings (libx264 veryfast, CRF 20), so the difference is the pipeline. Also kiln --latency paced at the
// source's frame rate: its p99 latency against the loop's single-frame time. The bound of the throughput ratio is
// measured, not assumed: one copy of the loop per thread, each on one thread pinned to its own CPU, all at once
// (every_core_loops). The runs are repeated in rounds (loop, the copies, kiln --throughput, kiln --latency, then
// again): each ratio is taken within a round, so a slow spell of a shared machine weighs on both sides, and the
// medians over the rounds are reported with every round's value.
// Each side's CPU time per frame (user + system, the whole process) is reported beside its rate: on a loaded machine
// the rates swing with the other work, the CPU time much less.
//
//   segment_peers [--video person.mp4] [--threads 2] [--loop-threads N] [--repeats 3] [--json out.json]
// Without --video, a 1280 x 720 H.264 video of real photographs is made first (tools/video/make_person_video.py).
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <sched.h>
#include <sys/resource.h>
#include <thread>

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
  Clock::time_point started, finished;  // the timed part: from the first frame's read to the encoder's finish
};

// The sequential loop; writes a 0/255 mask video like kiln segment's default output. `opened`, when given, is called
// once everything is open, just before the timed part.
LoopResult sequential_loop(const std::string& video, const std::string& output, const kiln::PackagedModel& model,
                           int threads, const std::function<void()>& opened = {}) {
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

  if (opened) opened();
  LoopResult r;
  double compute = 0, decode = 0, model_run = 0, encode = 0;
  const double cpu0 = process_cpu_seconds();
  const auto t0 = Clock::now();
  r.started = t0;
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
  r.finished = Clock::now();
  r.seconds = std::chrono::duration<double>(r.finished - t0).count();
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

// The CPUs this process may run on, in order.
std::vector<int> allowed_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) throw std::runtime_error("sched_getaffinity failed");
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  return cpus;
}

// The loop on one thread and one CPU: the calling thread (0 for sched_setaffinity) pinned to `cpu` before anything
// opens, so that every thread FFmpeg, x264 or ONNX Runtime starts inherits it (and sizes itself for one CPU), ONNX
// Runtime on one intra-op thread. OpenCV's pool is not pinned: the caller turns it off (cv::setNumThreads(1)).
// Throws when the pin did not take or the thread ended on another CPU; the caller's affinity is restored.
LoopResult sequential_loop_on_cpu(const std::string& video, const std::string& output,
                                  const kiln::PackagedModel& model, int cpu,
                                  const std::function<void()>& opened = {}) {
  cpu_set_t before;
  CPU_ZERO(&before);
  if (sched_getaffinity(0, sizeof(before), &before) != 0) throw std::runtime_error("sched_getaffinity failed");
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {
    throw std::runtime_error("sched_setaffinity to CPU " + std::to_string(cpu) + " failed");
  }
  struct Restore {
    cpu_set_t mask;
    ~Restore() { sched_setaffinity(0, sizeof(mask), &mask); }
  } restore{before};
  cpu_set_t now;
  CPU_ZERO(&now);
  if (sched_getaffinity(0, sizeof(now), &now) != 0 || CPU_COUNT(&now) != 1 || !CPU_ISSET(cpu, &now)) {
    throw std::runtime_error("pinning to CPU " + std::to_string(cpu) + " did not take");
  }
  LoopResult r = sequential_loop(video, output, model, 1, opened);
  if (const int ran_on = sched_getcpu(); ran_on != cpu) {
    throw std::runtime_error("the loop pinned to CPU " + std::to_string(cpu) + " ended on CPU " +
                             std::to_string(ran_on));
  }
  return r;
}

// OpenCV's parallel_for_ off (run in the calling thread) for a scope, then back to its default.
struct OpenCvSerial {
  OpenCvSerial() { cv::setNumThreads(1); }
  ~OpenCvSerial() { cv::setNumThreads(-1); }
};

struct EveryCoreResult {
  std::vector<int> cpus;  // one copy on each
  int64_t frames = 0;     // of all copies
  double seconds = 0;     // from the copies' common start to the last one's finish
  double fps_of_copies = 0;  // each copy's frames over its own time, summed: the rate if no CPU idled at the end
  double components_fps = 0;  // the same with only decode, the model and encode timed (pre/post-processing free)
  std::vector<double> copy_seconds;
  std::vector<double> components_ms;  // each copy's decode + model + encode per frame
  double cpu_ms = 0;      // CPU time of the process per frame over that span, closing the copies included
};

// `copies` one-thread loops at the same time (no more than the CPUs allowed), each on its own std::thread pinned to
// its own CPU, each over the whole video into its own file. They open first, then all start together (a barrier).
EveryCoreResult every_core_loops(const std::string& video, const fs::path& dir, const kiln::PackagedModel& model,
                                 int copies) {
  std::vector<int> cpus = allowed_cpus();
  if (cpus.size() > static_cast<size_t>(copies)) cpus.resize(static_cast<size_t>(copies));
  const OpenCvSerial serial;
  Clock::time_point t0;
  double cpu0 = 0;
  std::barrier start(static_cast<std::ptrdiff_t>(cpus.size()), [&]() noexcept {
    t0 = Clock::now();
    cpu0 = process_cpu_seconds();
  });
  std::vector<LoopResult> results(cpus.size());
  std::vector<std::exception_ptr> errors(cpus.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cpus.size(); ++i) {
    threads.emplace_back([&, i] {
      bool arrived = false;
      try {
        results[i] = sequential_loop_on_cpu(video, (dir / ("every_core_" + std::to_string(i) + ".mp4")).string(),
                                            model, cpus[i], [&] {
                                              arrived = true;
                                              start.arrive_and_wait();
                                            });
      } catch (...) {
        errors[i] = std::current_exception();
        if (!arrived) start.arrive_and_drop();  // the others must not wait for it
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  EveryCoreResult r;
  r.cpus = cpus;
  Clock::time_point last = t0;
  for (const LoopResult& one : results) {
    r.frames += one.frames;
    last = std::max(last, one.finished);
    r.fps_of_copies += static_cast<double>(one.frames) / one.seconds;
    r.copy_seconds.push_back(one.seconds);
    const double work_ms = one.decode_ms + one.model_ms + one.encode_ms;
    if (work_ms > 0) r.components_fps += 1e3 / work_ms;
    r.components_ms.push_back(work_ms);
  }
  r.seconds = std::chrono::duration<double>(last - t0).count();
  r.cpu_ms = r.frames > 0 ? 1e3 * (process_cpu_seconds() - cpu0) / static_cast<double>(r.frames) : 0;
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
  app.add_option("--repeats", repeats, "Rounds of loop, every-core loops, kiln --throughput and --latency; medians")
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
      EveryCoreResult every_core;
      kiln::SegmentJobSummary throughput, latency;
    };
    std::vector<Round> rounds;
    for (int r = 0; r < repeats; ++r) {
      Round round;
      round.loop = sequential_loop(video, (dir / "loop.mp4").string(), model.value(), loop_threads);
      round.every_core = every_core_loops(video, dir, model.value(), threads);
      round.throughput = kiln_run(video, (dir / "throughput.mp4").string(), "throughput", threads);
      round.latency = kiln_run(video, (dir / "latency.mp4").string(), "latency", threads);
      rounds.push_back(std::move(round));
    }
    std::vector<double> loop_fps, loop_frame_ms, loop_compute_ms, loop_cpu_ms, tp_cpu_ms, tp_fps, tp_p50, tp_p99,
        lat_fps, lat_p50, lat_p95, lat_p99, ratio_tp, ratio_lat, every_fps, every_fps_to_last,
        every_cpu_ms, ratio_every, tp_of_every, components_fps, ratio_components, tp_of_components, kiln_post_ms,
        kiln_work_fps, ratio_kiln_work, tp_of_kiln_work;
    std::vector<std::vector<double>> every_copy_seconds;
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
      every_fps.push_back(r.every_core.fps_of_copies);
      every_fps_to_last.push_back(static_cast<double>(r.every_core.frames) / r.every_core.seconds);
      every_copy_seconds.push_back(r.every_core.copy_seconds);
      every_cpu_ms.push_back(r.every_core.cpu_ms);
      ratio_every.push_back(every_fps.back() / loop_fps.back());
      tp_of_every.push_back(r.throughput.fps / every_fps.back());
      components_fps.push_back(r.every_core.components_fps);
      ratio_components.push_back(components_fps.back() / loop_fps.back());
      tp_of_components.push_back(r.throughput.fps / components_fps.back());
      // The components plus kiln's own post-processing stage (its busy time per frame; the preprocess, fused into
      // the infer stage, still taken as free): the least work of kiln's design on each CPU.
      double post_s = 0;
      for (const auto& stage : r.throughput.stages) {
        if (stage.name == "post") post_s += stage.busy_s;
      }
      kiln_post_ms.push_back(tp_frames > 0 ? 1e3 * post_s / tp_frames : 0);
      double work_fps = 0;
      for (const double ms : r.every_core.components_ms) {
        if (ms > 0) work_fps += 1e3 / (ms + kiln_post_ms.back());
      }
      kiln_work_fps.push_back(work_fps);
      ratio_kiln_work.push_back(work_fps / loop_fps.back());
      tp_of_kiln_work.push_back(work_fps > 0 ? r.throughput.fps / work_fps : 0);
      ratio_lat.push_back(r.latency.latency_p99_ms / r.loop.frame_ms);
      dropped = std::max(dropped, r.latency.streams[0].dropped);
    }
    // The work that no pipeline of these components avoids (decode, the model, encode; kiln's pre- and
    // post-processing left out as if free) on one core, and what `threads` cores of it would do if they scaled
    // perfectly (they do not on this VM: every_core_loops measures what they do).
    LoopResult one_core;
    {
      const OpenCvSerial serial;
      one_core = sequential_loop_on_cpu(video, (dir / "one_core.mp4").string(), model.value(), allowed_cpus()[0]);
    }
    const double work_ms = one_core.decode_ms + one_core.model_ms + one_core.encode_ms;
    using kiln::bench::median_of;
    const char* const batch_why =
        "on the CPU provider one frame per inference run (segment_engine.cpp): ONNX Runtime's CPU kernels gain "
        "nothing from batching this small model (kiln bench segment: batch 1 the fastest, 5-15 % ahead of 8), and a "
        "batch holds the stages around it back; the frames overlap across the reader, inference and writer threads "
        "instead";
    const double throughput_ratio = median_of(ratio_tp);
    const double latency_ratio = median_of(ratio_lat);
    const double every_ratio = median_of(ratio_every);
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
          {"perfect_scaling_bound_fps", work_ms > 0 ? 1e3 * threads / work_ms : 0.0},
          {"perfect_scaling_bound_vs_loop", work_ms > 0 ? 1e3 * threads / work_ms / median_of(loop_fps) : 0.0},
          {"meaning", "decode + model + encode per frame on one core and one thread, after the rounds; "
                      "perfect_scaling_bound_fps = threads cores of that work scaling perfectly, which cores of a VM "
                      "need not do: every_core_loops is the bound measured"}}},
        {"every_core_loops",
         {{"copies", rounds[0].every_core.cpus.size()}, {"cpus", rounds[0].every_core.cpus},
          {"allowed_cpus", allowed_cpus().size()},
          {"fps", median_of(every_fps)}, {"fps_runs", every_fps}, {"fps_to_last_finish_runs", every_fps_to_last},
          {"copy_seconds_runs", every_copy_seconds}, {"vs_loop", every_ratio},
          {"components_fps", median_of(components_fps)}, {"components_fps_runs", components_fps},
          {"components_vs_loop", median_of(ratio_components)}, {"components_vs_loop_runs", ratio_components},
          {"kiln_post_ms", median_of(kiln_post_ms)}, {"kiln_post_ms_runs", kiln_post_ms},
          {"components_and_kiln_post_fps", median_of(kiln_work_fps)},
          {"components_and_kiln_post_fps_runs", kiln_work_fps},
          {"components_and_kiln_post_vs_loop", median_of(ratio_kiln_work)},
          {"components_and_kiln_post_vs_loop_runs", ratio_kiln_work},
          {"vs_loop_runs", ratio_every}, {"cpu_ms", median_of(every_cpu_ms)}, {"cpu_ms_runs", every_cpu_ms},
          {"meaning",
           "one copy of the loop per thread (at most one per allowed CPU), all at the same time, each on one thread "
           "pinned to its own CPU, ONNX Runtime on one thread, OpenCV's pool off, each over the whole video into its "
           "own file, all starting together once open; fps = each copy's frames over its own time, summed (the "
           "CPUs' rates added, so a CPU whose copy finished first does not count as idle; fps_to_last_finish = all "
           "frames over the time to the last copy's finish). Nothing is shared between them, so this is what these "
           "components reach on these CPUs: a pipeline of the same components doing the same work (decode, the "
           "model, encode, the pre- and post-processing) does at least this work plus its hand-offs between threads "
           "on the same CPUs, so no such pipeline passes it on a machine as fast as in that round (a single round "
           "moves with a shared VM; compare the medians). With fewer copies than allowed_cpus it bounds only a "
           "pipeline confined to `copies` CPUs (kiln's stage threads are not: run it under taskset -c). vs_loop = "
           "the median of each round's ratio to that round's loop (the rounds interleave the loop, these copies and "
           "kiln); cpu_ms = the process's CPU time per frame over the span to the last finish. components_fps: the "
           "same copies with only their decode, model and encode time counted, the pre- and post-processing taken "
           "as free (kiln's fused ones cost less than the loop's OpenCV passes): the bound for any pipeline of these "
           "three components. components_and_kiln_post: the same with kiln's own post-processing added to each "
           "frame (its post stage's busy time per frame in that round's kiln run; its preprocess, fused into the "
           "infer stage, still free): the bound for kiln's design, which targets.throughput_2x_reachable uses. A bound on an idle machine only: under load "
           "the pinned copies cannot move off a busy CPU, a pipeline's threads can"}}},
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
          {"latency_p99_vs_loop_frame_time", latency_ratio}, {"latency_p99_vs_loop_frame_time_runs", ratio_lat},
          {"throughput_of_every_core_loops", median_of(tp_of_every)},
          {"throughput_of_every_core_loops_runs", tp_of_every},
          {"throughput_of_every_core_components", median_of(tp_of_components)},
          {"throughput_of_every_core_components_runs", tp_of_components},
          {"throughput_of_components_and_kiln_post", median_of(tp_of_kiln_work)},
          {"throughput_of_components_and_kiln_post_runs", tp_of_kiln_work}}},
        {"targets",
         {{"throughput_2x", throughput_ratio >= 2},
          // null where the copies do not fill the allowed CPUs: kiln and the loop may use the others then.
          {"throughput_2x_reachable", rounds[0].every_core.cpus.size() < allowed_cpus().size()
                                          ? nlohmann::json(nullptr)
                                          : nlohmann::json(median_of(ratio_kiln_work) >= 2)},
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
