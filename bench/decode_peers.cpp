// decode_peers: kiln's image decode against OpenCV's imdecode and Pillow, per format, on the same files in memory.
//
//   decode_peers [--json FILE|-] [--plot FILE] [--seconds S] [--threads 1,2] [--formats jpeg,png,...]
//                [--sizes 512x512,12mp] [--rounds N] [--no-pillow] [--opencv-rgb] [--python PATH] [--files DIR]
//
// The files (bench/decode_files.py, kept in --files, default build/decode-files): one real photograph in every format
// kiln reads at 512 x 512 and 12 MP. Each tool decodes a file's bytes to 8-bit RGB, T threads each decoding its own
// copies for S seconds after a warm-up decode, reported as images per second; --rounds N alternates kiln and OpenCV
// N times per case and reports the medians (a sub-millisecond decode's rate moves from one window to the next on a
// shared VM, and a drift then falls on both tools alike); "cpu-us" is the decoding threads' CPU time per image, which
// other processes on the machine move far less than they move the rate. kiln: image_decode (with what it does
// by default: orientation and colour profile, none of which these files ask for); OpenCV: cv::imdecode
// (IMREAD_COLOR, cv::setNumThreads(1) so that T threads are T decodes) for the formats Debian's OpenCV reads, its
// pixels left in OpenCV's BGR order (--opencv-rgb adds the cv::cvtColor to RGB that a caller wanting kiln's RGB
// needs: BMP stores BGR, so OpenCV's BGR decode is row copies where kiln swaps every pixel);
// Pillow: bench/decode_pillow.py (Image.open + convert("RGB")). "kiln_over_best" is kiln's rate ÷ the best peer's
// (target >= 1 for every format that has a peer), and each kiln decode is checked against OpenCV's and Pillow's
// pixels (mean absolute difference, "check" and "pil-check") so that no ratio compares different work without it
// showing: every peer ends with 8-bit RGB pixels, a GIF's palette expanded as kiln expands it.
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "kiln/codec.h"

namespace {

using Bytes = std::vector<uint8_t>;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string json_path;
  std::string plot_path;
  std::string files_dir = std::string(KILN_BINARY_DIR) + "/decode-files";
  std::string python = "/usr/bin/python3";
  double seconds = 1.0;
  int32_t rounds = 1;
  std::vector<int32_t> threads = {1, 2};
  std::vector<std::string> formats;  // empty: all
  std::vector<std::string> sizes;    // empty: all
  bool pillow = true;
  bool opencv_rgb = false;
};

struct Measured {
  double images_per_s = 0;
  double cpu_us = 0;  // the decoding threads' CPU time (user and system) per image
};

int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// Decodes per second: `threads` threads, each calling `decode` on its own copy of `data` for `seconds`.
template <typename Decode>
Measured decode_rate(const Bytes& data, int32_t threads, double seconds, const Decode& decode) {
  if (!decode(data)) return {};  // warm-up, and a tool that cannot read the file
  std::atomic<int64_t> count{0};
  std::atomic<int64_t> cpu_ns{0};
  const auto start = Clock::now();
  const auto stop = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> workers;
  for (int32_t t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      const Bytes copy = data;
      int64_t n = 0;
      const int64_t cpu_start = thread_cpu_ns();
      while (Clock::now() < stop) n += decode(copy) ? 1 : 0;
      cpu_ns += thread_cpu_ns() - cpu_start;
      count += n;
    });
  }
  for (std::thread& w : workers) w.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  if (count == 0) return {};
  return {static_cast<double>(count) / elapsed, static_cast<double>(cpu_ns) / 1e3 / static_cast<double>(count)};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n == 0 ? 0 : n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

bool kiln_decode(const Bytes& data) {
  kiln::DecodeOptions options;
  options.channels = 3;
  return kiln::image_decode(data.data(), data.size(), options).is_ok();
}

cv::Mat opencv_imdecode(const Bytes& data) {
  return cv::imdecode(cv::Mat(1, static_cast<int>(data.size()), CV_8U, const_cast<uint8_t*>(data.data())),
                      cv::IMREAD_COLOR);
}

bool opencv_decode(const Bytes& data) { return !opencv_imdecode(data).empty(); }

bool opencv_decode_rgb(const Bytes& data) {
  const cv::Mat bgr = opencv_imdecode(data);
  if (bgr.empty()) return false;
  cv::Mat rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return !rgb.empty();
}

// kiln's pixels against OpenCV's (BGR), mean absolute difference; NaN when either cannot read the file.
double pixels_difference(const Bytes& data) {
  kiln::DecodeOptions options;
  options.channels = 3;
  const auto mine = kiln::image_decode(data.data(), data.size(), options);
  const cv::Mat theirs = opencv_imdecode(data);
  if (!mine.is_ok() || theirs.empty() || theirs.cols != mine->width || theirs.rows != mine->height) return NAN;
  double sum = 0;
  for (int y = 0; y < theirs.rows; ++y) {
    const uint8_t* b = theirs.ptr<uint8_t>(y);
    const uint8_t* a = mine->pixels.data() + static_cast<size_t>(y) * mine->width * 3;
    for (int x = 0; x < theirs.cols; ++x)
      for (int c = 0; c < 3; ++c) sum += std::abs(int(a[x * 3 + c]) - int(b[x * 3 + 2 - c]));
  }
  return sum / (3.0 * theirs.rows * theirs.cols);
}

// kiln's pixels against Pillow's (bench/decode_pillow.py --rgb), mean absolute difference; NaN when either cannot
// read the file.
double pillow_difference(const Options& opt, const std::string& path, const Bytes& data) {
  kiln::DecodeOptions options;
  options.channels = 3;
  const auto mine = kiln::image_decode(data.data(), data.size(), options);
  int status = 0;
  const auto theirs = kiln::bench::command_output(
      kiln::bench::shell_quote(opt.python) + " " +
          kiln::bench::shell_quote(std::string(KILN_SOURCE_DIR) + "/bench/decode_pillow.py") + " --rgb " +
          kiln::bench::shell_quote(path) + " 2>/dev/null",
      &status);
  if (!mine.is_ok() || !theirs || status != 0 || theirs->size() != mine->pixels.size()) return NAN;
  double sum = 0;
  for (size_t i = 0; i < theirs->size(); ++i) sum += std::abs(int(mine->pixels[i]) - int(uint8_t((*theirs)[i])));
  return sum / static_cast<double>(theirs->size());
}

Bytes file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool wanted(const std::vector<std::string>& list, const std::string& item) {
  return list.empty() || std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"decode_peers: kiln's image decode against OpenCV imdecode and Pillow, per format"};
  app.add_option("--json", opt.json_path, "Write the results as JSON to FILE (- for standard output)");
  kiln::bench::plot_option_add(app, &opt.plot_path);
  app.add_option("--seconds", opt.seconds, "Seconds per measurement")->check(kiln::bench::positive());
  app.add_option("--rounds", opt.rounds, "Alternate kiln and OpenCV this many times per case; report the medians")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", opt.threads, "Thread counts, each its own measurement")->delimiter(',');
  app.add_option("--formats", opt.formats, "Formats (jpeg,png,webp,gif,bmp,tiff,heic,avif; default all)")
      ->delimiter(',');
  app.add_option("--sizes", opt.sizes, "Sizes (512x512,12mp; default both)")->delimiter(',');
  app.add_option("--files", opt.files_dir, "Where the test files are made (bench/decode_files.py) and kept");
  app.add_option("--python", opt.python, "Interpreter for bench/decode_files.py and decode_pillow.py");
  app.add_flag("--no-pillow", [&](int64_t) { opt.pillow = false; }, "Leave Pillow out");
  app.add_flag("--opencv-rgb", opt.opencv_rgb, "OpenCV's decode followed by cv::cvtColor to RGB (kiln's order)");
  if (const auto code = kiln::bench::args_parse(app, argc, argv)) return *code;
  cv::setNumThreads(1);  // T threads are T decodes (set once: OpenCV's TBB pool is not to be reset from many threads)

  using kiln::bench::shell_quote;
  const std::string scripts = std::string(KILN_SOURCE_DIR) + "/bench/";
  int status = 0;
  const auto listing = kiln::bench::command_output(
      shell_quote(opt.python) + " " + shell_quote(scripts + "decode_files.py") + " " + shell_quote(opt.files_dir),
      &status);
  if (!listing || status != 0) {
    std::fprintf(stderr, "decode_peers: bench/decode_files.py failed (exit %d)\n", status);
    return 1;
  }
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : nlohmann::json::parse(*listing)) {
    if (wanted(opt.formats, f["format"]) && wanted(opt.sizes, f["size"])) files.push_back(f);
  }
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json ratios = nlohmann::json::array();
  bool all_met = true;
  const bool table = opt.json_path != "-";
  if (table) std::printf("%-6s %-8s %3s %12s %12s %12s %8s %11s %11s %10s %10s\n", "format", "size", "thr", "kiln/s",
                         "opencv/s", "pillow/s", "ratio", "kiln-cpu-us", "cv-cpu-us", "check", "pil-check");
  std::map<std::string, double> pillow_checks;  // per file, once
  if (opt.pillow) {
    for (const auto& f : files) {
      const std::string path = f["path"];
      pillow_checks[path] = pillow_difference(opt, path, file_bytes(path));
    }
  }
  for (const int32_t threads : opt.threads) {
    std::map<std::string, double> pillow;
    if (opt.pillow) {
      std::string command = shell_quote(opt.python) + " " + shell_quote(scripts + "decode_pillow.py") + " " +
                            std::to_string(opt.seconds) + " " + std::to_string(threads);
      for (const auto& f : files) command += " " + shell_quote(f["path"].get<std::string>());
      const auto out = kiln::bench::command_output(command, &status);
      if (out && status == 0) pillow = nlohmann::json::parse(*out).get<std::map<std::string, double>>();
    }
    for (const auto& f : files) {
      const std::string path = f["path"];
      const Bytes data = file_bytes(path);
      std::vector<double> kiln_rates;
      std::vector<double> opencv_rates;
      std::vector<double> kiln_cpu;
      std::vector<double> opencv_cpu;
      for (int32_t round = 0; round < opt.rounds; ++round) {
        const Measured mine = decode_rate(data, threads, opt.seconds, kiln_decode);
        const Measured theirs =
            decode_rate(data, threads, opt.seconds, opt.opencv_rgb ? opencv_decode_rgb : opencv_decode);
        kiln_rates.push_back(mine.images_per_s);
        opencv_rates.push_back(theirs.images_per_s);
        kiln_cpu.push_back(mine.cpu_us);
        opencv_cpu.push_back(theirs.cpu_us);
      }
      const double kiln_rate = median(kiln_rates);
      const double opencv_rate = median(opencv_rates);
      const double kiln_cpu_us = median(kiln_cpu);
      const double opencv_cpu_us = median(opencv_cpu);
      const double pillow_rate = pillow.count(path) ? pillow[path] : 0;
      const double best = std::max(opencv_rate, pillow_rate);
      const double check = pixels_difference(data);
      const std::string name = f["format"].get<std::string>() + " " + f["size"].get<std::string>();
      for (const auto& [peer, rate] : {std::pair{"kiln", kiln_rate}, {"opencv", opencv_rate}, {"pillow", pillow_rate}}) {
        if (rate > 0) {
          results.push_back({{"peer", peer}, {"case", name}, {"threads", threads}, {"images_per_s", rate}});
        }
      }
      nlohmann::json ratio = {{"format", f["format"]}, {"size", f["size"]}, {"threads", threads},
                              {"bytes", f["bytes"]}, {"kiln_rate", kiln_rate}};
      if (opt.rounds > 1) ratio["rounds"] = {{"kiln", kiln_rates}, {"opencv", opencv_rates}};
      ratio["kiln_cpu_us"] = kiln_cpu_us;
      if (opencv_cpu_us > 0) ratio["opencv_cpu_us"] = opencv_cpu_us;
      if (best > 0) {
        ratio["kiln_over_best"] = kiln_rate / best;
        ratio["target"] = kiln_rate >= best ? "met" : "not met";
        all_met = all_met && kiln_rate >= best;
      } else {
        ratio["target"] = "no peer reads this format";
      }
      if (!std::isnan(check)) ratio["check_mean_abs_vs_opencv"] = check;
      const double pillow_check = pillow_checks.count(path) ? pillow_checks[path] : NAN;
      if (!std::isnan(pillow_check)) ratio["check_mean_abs_vs_pillow"] = pillow_check;
      ratios.push_back(ratio);
      if (table) {
        std::printf("%-6s %-8s %3d %12.1f %12.1f %12.1f %7.2fx %11.1f %11.1f %10.3g %10.3g  %s\n",
                    f["format"].get<std::string>().c_str(), f["size"].get<std::string>().c_str(), threads, kiln_rate,
                    opencv_rate, pillow_rate, best > 0 ? kiln_rate / best : 0.0, kiln_cpu_us, opencv_cpu_us, check,
                    pillow_check, ratio["target"].get<std::string>().c_str());
        std::fflush(stdout);
      }
    }
  }
  if (table) std::printf("target (kiln >= the best peer for every format): %s\n", all_met ? "met" : "not met");
  const nlohmann::json out{{"commit", kiln::bench::git_commit()}, {"cpu", kiln::bench::cpu_model()},
                           {"opencv_version", CV_VERSION}, {"seconds", opt.seconds}, {"rounds", opt.rounds},
                           {"results", results},
                           {"ratios", ratios}, {"target_met", all_met}};
  if (kiln::bench::plot_write(out, opt.plot_path, "decode_peers: images/s by format, kiln, OpenCV and Pillow") != 0)
    return 1;
  if (opt.json_path == "-") {
    std::printf("%s\n", out.dump(2).c_str());
  } else if (!opt.json_path.empty()) {
    std::ofstream(opt.json_path) << out.dump(2) << "\n";
  }
  return 0;
}
