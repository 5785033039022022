// serve_models_bound: the most kiln serve's face endpoints can answer on this machine, measured as the two face models
// alone (faces_peers_models: kiln's sessions and session options, every input prepared outside the timing) on one
// photo repeated. Two layouts: `instances` sessions of one thread each running at once at each batch size (kiln
// serve's layout on the CPU, where its batches are at most --max-batch), and one session on every thread at batch 1
// (the worker design's: one image at a time). Rounds interleave the layouts; each is reported as its best round (a
// bound), with the median and min. bench/serve_peers.py runs it for the bound of its kiln / worker target.
//
//   serve_models_bound PHOTO [--batch-sizes 1,2,4,8] [--instances 2] [--threads 2] [--seconds 2] [--repeats 3]
//                            [--json FILE]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>

#include "bench_common.h"
#include "faces_peers_models.h"
#include "kiln/codec.h"

namespace {

using Clock = std::chrono::steady_clock;

void check(const kiln::Status& status, const std::string& what) {
  if (status.is_ok()) return;
  std::fprintf(stderr, "serve_models_bound: %s: %s\n", what.c_str(), status.message().c_str());
  std::exit(1);
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double cpu_seconds() {  // this process's user + system time, every thread
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Sample {
  double images_per_s = 0;
  double cpu_ms_per_image = 0;  // steadier than the rate on a shared machine: others' load takes time, not work
};

// `sessions` run at once, one thread each, whole passes until `seconds` are up; images per second of them all.
Sample measure(const std::vector<std::shared_ptr<kiln::bench::FaceModelsOnly>>& sessions, int64_t images_per_pass,
               double seconds) {
  for (const auto& s : sessions) kiln::bench::face_models_only_pass(*s);  // warm
  std::atomic<int64_t> passes{0};
  const double cpu_start = cpu_seconds();
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (const auto& s : sessions) {
    threads.emplace_back([&, s] {
      while (Clock::now() < end) {
        kiln::bench::face_models_only_pass(*s);
        passes.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const auto images = static_cast<double>(passes.load() * images_per_pass);
  return {images / elapsed, (cpu_seconds() - cpu_start) * 1e3 / images};
}

struct Layout {
  std::string name;
  int64_t batch = 1;
  int instances = 1;
  int threads = 1;
  std::vector<std::shared_ptr<kiln::bench::FaceModelsOnly>> sessions;
  std::vector<Sample> samples;
};

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

nlohmann::json layout_json(const Layout& l) {
  std::vector<double> rates, cpu;
  for (const Sample& s : l.samples) {
    rates.push_back(s.images_per_s);
    cpu.push_back(s.cpu_ms_per_image);
  }
  return {{"batch", l.batch},
          {"instances", l.instances},
          {"threads_each", l.threads},
          {"images_per_s", *std::max_element(rates.begin(), rates.end())},
          {"images_per_s_median", median_of(rates)},
          {"images_per_s_min", *std::min_element(rates.begin(), rates.end())},
          {"images_per_s_each", rates},
          {"cpu_ms_per_image", *std::min_element(cpu.begin(), cpu.end())},
          {"cpu_ms_per_image_median", median_of(cpu)},
          {"cpu_ms_per_image_each", cpu}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The two face models alone on one photo: kiln serve's layout at each batch size, and one at a time"};
  std::string photo;
  std::vector<int64_t> batch_sizes{1, 2, 4, 8};
  int instances = 2;
  int threads = 2;
  double seconds = 2;
  int repeats = 3;
  std::string json_path;
  app.add_option("photo", photo, "A photograph with one face (the load's)")->required();
  app.add_option("--batch-sizes", batch_sizes, "Batch sizes of kiln serve's layout")->delimiter(',');
  app.add_option("--instances", instances, "Sessions of one thread run at once (kiln serve's --instances)")
      ->check(kiln::bench::positive());
  app.add_option("--threads", threads, "Threads of the one-at-a-time session (the worker's: every core)")
      ->check(kiln::bench::positive());
  app.add_option("--seconds", seconds, "Seconds per measurement")->check(kiln::bench::positive());
  app.add_option("--repeats", repeats, "Rounds, every layout once per round")->check(kiln::bench::positive());
  app.add_option("--json", json_path, "Also write the JSON here");
  if (auto code = kiln::bench::args_parse(app, argc, argv)) return *code;

  kiln::DecodeOptions decode;
  decode.channels = 3;
  auto image = kiln::image_decode_file(photo, decode);
  check(image.status(), photo);
  const kiln::ImageBuffer& pixels = image.value();
  const cv::Mat rgb(pixels.height, pixels.width, CV_8UC3, const_cast<uint8_t*>(pixels.pixels.data()));

  // The faces kiln serve finds (its analyzer at its detector threshold), for the embedder's inputs.
  kiln::FaceSettings settings;
  settings.min_score = 0.5f;
  kiln::ExecSettings exec;
  exec.mode = kiln::ExecMode::kCpu;
  exec.threads = 1;
  exec.batch_size = 1;
  auto analyzer = kiln::FaceAnalyzer::open(settings, exec);
  check(analyzer.status(), "opening kiln's FaceAnalyzer");
  std::vector<std::vector<kiln::Face>> found;
  const kiln::VarShapeBatch one = kiln::VarShapeBatch::wrap({pixels.view()});
  check(analyzer.value()->analyze(one.view(), &found), "kiln analyze");
  auto detector = kiln::packaged_model("blazeface-back");
  auto embedder = kiln::packaged_model(settings.embedder);
  check(detector.status(), "blazeface-back");
  check(embedder.status(), settings.embedder);

  std::vector<Layout> layouts;
  for (const int64_t batch : batch_sizes) {
    Layout l{std::to_string(instances) + "x1_b" + std::to_string(batch), batch, instances, 1, {}, {}};
    const std::vector<cv::Mat> mats(static_cast<size_t>(batch), rgb);
    const std::vector<std::vector<kiln::Face>> faces(static_cast<size_t>(batch), found.front());
    for (int i = 0; i < instances; ++i) {
      l.sessions.push_back(kiln::bench::face_models_only_open(detector.value(), embedder.value(), mats, faces, 1, batch));
    }
    layouts.push_back(std::move(l));
  }
  Layout single{"1x" + std::to_string(threads) + "_b1", 1, 1, threads, {}, {}};
  single.sessions.push_back(
      kiln::bench::face_models_only_open(detector.value(), embedder.value(), {rgb}, found, threads, 1));
  layouts.push_back(std::move(single));

  const std::string load_before = load_average();
  for (int r = 0; r < repeats; ++r) {
    for (Layout& l : layouts) {
      l.samples.push_back(measure(l.sessions, l.batch, seconds));
      std::fprintf(stderr, "round %d %-10s %8.2f images/s %6.2f CPU ms/image\n", r + 1, l.name.c_str(),
                   l.samples.back().images_per_s, l.samples.back().cpu_ms_per_image);
    }
  }

  nlohmann::json results = nlohmann::json::object();
  std::string best;
  double best_rate = 0;
  for (const Layout& l : layouts) {
    results[l.name] = layout_json(l);
    const double rate = results[l.name]["images_per_s"].get<double>();
    if (rate > best_rate) {
      best_rate = rate;
      best = l.name;
    }
  }
  const std::string worker = layouts.back().name;
  const nlohmann::json report = {
      {"benchmark", "serve_models_bound"},
      {"commit", kiln::bench::git_commit()},
      {"cpu", kiln::bench::cpu_model()},
      {"photo", photo},
      {"faces_per_image", found.front().size()},
      {"seconds_per_measurement", seconds},
      {"repeats", repeats},
      {"load_average_before", load_before},
      {"load_average_after", load_average()},
      {"reported", "images_per_s: the best of the rounds (a bound: others' load on a shared machine only slows a "
                   "round down), with the median and min; cpu_ms_per_image: the process's CPU time (every thread) "
                   "per image, the least of the rounds, with the median"},
      {"layouts", results},
      {"best", best},
      {"best_images_per_s", best_rate},
      {"one_at_a_time", worker},
      {"one_at_a_time_images_per_s", results[worker]["images_per_s"]}};
  const std::string text = report.dump(1);
  std::printf("%s\n", text.c_str());
  if (!json_path.empty()) std::ofstream(json_path) << text << "\n";
  return 0;
}
