// render_peers: single-thread line-chart rendering throughput of kiln's CPU renderer against OpenCV, Cairo and
// the predecessor's matplotlib method, on the same windows in one run.
//
//   render_peers [--json FILE] [--seconds S] [--repeats R] [--no-matplotlib] [--dump DIR] [--python PATH]
//
// Every tool turns one window of seq_len values into a gray uint8 image (white background, black line) with the
// window's min-max normalization inside the timed loop. Per tool and size: a warm-up, then R repeats of S seconds,
// reported as images per CPU-second of the rendering thread and per wall-clock second (mean ± sample stddev).
#include <CLI/CLI.hpp>
#include <cairo.h>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <time.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "apps/bench/bench_stats.h"
#include "render_peers_renderers.h"

namespace {

using namespace kiln::bench;  // the renderers and their dataset, the statistics, the run info

constexpr double kWarmupSeconds = 0.3;
constexpr double kMatplotlibDpi = 100.0;
constexpr int kInkSamples = 16;  // windows averaged for the effective line width

constexpr std::array<Config, 2> kConfigs = {{{800, 500, 3.0f}, {224, 224, 2.0f}}};

struct Options {
  std::string json_path;
  std::string plot_path;
  std::string dump_dir;
  std::string python = "/usr/bin/python3";
  double seconds = 1.0;
  int repeats = 3;
  bool matplotlib = true;
};

// The windows as a (count, seq_len) float32 .npy file (format version 1.0) for the Python peer.
bool npy_write(const std::string& path, const Dataset& d) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(kWindowCount) + ", " +
                       std::to_string(kSeqLen) + "), }";
  const size_t unpadded = 10 + header.size() + 1;  // magic + version + length, then the header and '\n'
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  const uint16_t length = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  const char length_le[2] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  out.write(length_le, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (int64_t i = 0; i < kWindowCount; ++i) {
    out.write(reinterpret_cast<const char*>(d.window(i)), kSeqLen * sizeof(float));
  }
  return static_cast<bool>(out);
}

// ---- measurement -------------------------------------------------------------------------------------------

struct Row {
  std::string tool;
  Config config;
  std::vector<double> cpu_rates;   // images per CPU-second of the thread, one per repeat
  std::vector<double> wall_rates;  // images per wall-clock second
  double ink_width = 0.0;          // effective line width in pixels
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Sample {
  double cpu_rate;
  double wall_rate;
};

// Renders until `seconds` of wall-clock time have passed; the CPU clock is read only at both ends because
// CLOCK_THREAD_CPUTIME_ID is a system call, while steady_clock is not.
Sample run_for(Renderer& r, double seconds, int64_t& next_window) {
  int64_t images = 0;
  const double wall0 = wall_seconds();
  const double cpu0 = thread_cpu_seconds();
  double wall = 0.0;
  do {
    r.render(next_window);
    next_window = (next_window + kRing) % kWindowCount;
    images += kRing;
    wall = wall_seconds() - wall0;
  } while (wall < seconds);
  const double cpu = thread_cpu_seconds() - cpu0;
  return {static_cast<double>(images) / cpu, static_cast<double>(images) / wall};
}

// Darkness (sum of (255 - p) / 255) divided by the polyline's length: the line's effective width in pixels.
// Slightly low for windows whose extremes are half-clipped at the top and bottom edges.
double ink_width(Renderer& r, const Dataset& d, const Config& c) {
  double total = 0.0;
  for (int64_t first = 0; first < kInkSamples; first += kRing) {
    r.render(first);
    for (int slot = 0; slot < kRing; ++slot) {
      double dark = 0.0;
      const uint8_t* img = r.image(slot);
      for (int32_t y = 0; y < c.height; ++y) {
        for (int32_t x = 0; x < c.width; ++x) dark += 255 - img[y * r.row_stride() + x];
      }
      double length = 0.0;
      float px = 0.0f;
      float py = 0.0f;
      bool first_point = true;
      window_points(d.window(first + slot), kSeqLen, c.width, c.height, [&](float x, float y) {
        if (!first_point) length += std::hypot(x - px, y - py);
        px = x;
        py = y;
        first_point = false;
      });
      total += dark / 255.0 / length;
    }
  }
  return total / kInkSamples;
}

void pgm_write(const std::string& path, const uint8_t* img, int64_t stride, int32_t width, int32_t height) {
  std::ofstream out(path, std::ios::binary);
  out << "P5\n" << width << ' ' << height << "\n255\n";
  for (int32_t y = 0; y < height; ++y) out.write(reinterpret_cast<const char*>(img + y * stride), width);
}

std::string dump_path(const Options& opt, const std::string& tool, const Config& c) {
  return opt.dump_dir + "/" + tool + "_" + std::to_string(c.width) + "x" + std::to_string(c.height) + ".pgm";
}

Row measure(const std::string& tool, Renderer& r, const Dataset& d, const Config& c, const Options& opt) {
  Row row{tool, c, {}, {}, 0.0};
  r.prepare();
  row.ink_width = ink_width(r, d, c);
  if (!opt.dump_dir.empty()) {
    r.render(0);
    pgm_write(dump_path(opt, tool, c), r.image(0), r.row_stride(), c.width, c.height);
  }
  int64_t next_window = 0;
  run_for(r, kWarmupSeconds, next_window);
  for (int i = 0; i < opt.repeats; ++i) {
    const Sample s = run_for(r, opt.seconds, next_window);
    row.cpu_rates.push_back(s.cpu_rate);
    row.wall_rates.push_back(s.wall_rate);
  }
  r.finish();
  return row;
}

// ---- matplotlib (separate Python process) ------------------------------------------------------------------

// The numbers after "key": in a flat JSON object: one for a scalar, all of them for an array.
std::vector<double> json_numbers(const std::string& json, const std::string& key) {
  std::vector<double> values;
  size_t pos = json.find("\"" + key + "\":");
  if (pos == std::string::npos) return values;
  pos += key.size() + 3;
  while (pos < json.size() && json[pos] == ' ') ++pos;
  const bool array = pos < json.size() && json[pos] == '[';
  const char* p = json.c_str() + pos + (array ? 1 : 0);
  for (;;) {
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) break;
    values.push_back(v);
    p = end;
    while (*p == ' ') ++p;
    if (!array || *p != ',') break;
    ++p;
  }
  return values;
}

std::string json_string(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\": \"";
  const size_t pos = json.find(needle);
  if (pos == std::string::npos) return {};
  const size_t begin = pos + needle.size();
  return json.substr(begin, json.find('"', begin) - begin);
}

std::optional<Row> measure_matplotlib(const std::string& npy, const Config& c, const Options& opt,
                                      std::string* version) {
  const std::string script = std::string(KILN_SOURCE_DIR) + "/bench/render_matplotlib.py";
  char number[64];
  std::snprintf(number, sizeof number, " --seconds %g --repeats %d --warmup %g --dpi %g", opt.seconds, opt.repeats,
                kWarmupSeconds, kMatplotlibDpi);
  std::string command = shell_quote(opt.python) + " " + shell_quote(script) + " " + shell_quote(npy) +
                        " --width " + std::to_string(c.width) + " --height " + std::to_string(c.height) +
                        " --line-width " + std::to_string(c.line_width) + number;
  if (!opt.dump_dir.empty()) command += " --dump " + shell_quote(dump_path(opt, "matplotlib", c));
  int exit_status = -1;
  const std::optional<std::string> out = command_output(command, &exit_status);
  const size_t line = out ? out->rfind("{\"tool\"") : std::string::npos;
  if (!out || exit_status != 0 || line == std::string::npos) {
    std::fprintf(stderr, "render_peers: skipping matplotlib at %dx%d (%s exited with status %d)\n", c.width,
                 c.height, opt.python.c_str(), exit_status);
    return std::nullopt;
  }
  const std::string json = out->substr(line);
  Row row{"matplotlib", c, json_numbers(json, "cpu_rates"), json_numbers(json, "wall_rates"), 0.0};
  const std::vector<double> ink = json_numbers(json, "ink_width");
  row.ink_width = ink.empty() ? 0.0 : ink[0];
  *version = json_string(json, "version");
  if (row.cpu_rates.empty() || row.cpu_rates.size() != row.wall_rates.size()) {
    std::fprintf(stderr, "render_peers: skipping matplotlib at %dx%d (unreadable result: %s)\n", c.width, c.height,
                 json.c_str());
    return std::nullopt;
  }
  return row;
}

// ---- report ------------------------------------------------------------------------------------------------

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) >= 0x20) out += ch;
  }
  return out;
}

const Row* row_find(const std::vector<Row>& rows, const std::string& tool, const Config& c) {
  for (const Row& r : rows) {
    if (r.tool == tool && r.config.width == c.width && r.config.height == c.height) return &r;
  }
  return nullptr;
}

struct Ratio {
  Config config;
  std::string peer;
  double cpu;   // kiln img/s ÷ peer img/s, per CPU-second
  double wall;  // the same, wall clock
};

std::vector<Ratio> ratios_of(const std::vector<Row>& rows) {
  std::vector<Ratio> ratios;
  for (const Config& c : kConfigs) {
    const Row* kiln_row = row_find(rows, "kiln", c);
    if (kiln_row == nullptr) continue;
    for (const char* peer : {"kiln-scalar", "opencv", "cairo", "matplotlib"}) {
      const Row* p = row_find(rows, peer, c);
      if (p == nullptr) continue;
      ratios.push_back({c, peer, stats_of(kiln_row->cpu_rates).mean / stats_of(p->cpu_rates).mean,
                        stats_of(kiln_row->wall_rates).mean / stats_of(p->wall_rates).mean});
    }
  }
  return ratios;
}

void print_tables(const std::vector<Row>& rows, const std::vector<Ratio>& ratios) {
  std::printf("\n%-12s %-8s %3s  %22s  %22s  %10s  %7s\n", "tool", "size", "lw", "img/CPU-s (mean ± sd)",
              "wall img/s (mean ± sd)", "us/img", "ink px");
  for (const Row& r : rows) {
    const Stats cpu = stats_of(r.cpu_rates);
    const Stats wall = stats_of(r.wall_rates);
    char size[32];
    std::snprintf(size, sizeof size, "%dx%d", r.config.width, r.config.height);
    std::printf("%-12s %-8s %3g  %12.1f ± %7.1f  %12.1f ± %7.1f  %10.2f  %7.2f\n", r.tool.c_str(), size,
                r.config.line_width, cpu.mean, cpu.stddev, wall.mean, wall.stddev, 1e6 / cpu.mean, r.ink_width);
  }
  std::printf("\n%-8s %3s  %-12s %14s %14s\n", "size", "lw", "peer", "kiln/peer CPU", "kiln/peer wall");
  for (const Ratio& q : ratios) {
    char size[32];
    std::snprintf(size, sizeof size, "%dx%d", q.config.width, q.config.height);
    std::printf("%-8s %3g  %-12s %14.2f %14.2f\n", size, q.config.line_width, q.peer.c_str(), q.cpu, q.wall);
  }
}

struct RunInfo {
  std::string commit;
  std::string device;
  std::string kiln_isa;
  std::string matplotlib_version;
};

bool json_write(const std::string& path, const RunInfo& info, const Options& opt, const std::vector<Row>& rows,
                const std::vector<Ratio>& ratios) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "{\n  \"commit\": \"%s\",\n  \"device\": \"%s\",\n", json_escape(info.commit).c_str(),
               json_escape(info.device).c_str());
  std::fprintf(f,
               "  \"kiln_isa\": \"%s\",\n  \"opencv_version\": \"%s\",\n  \"cairo_version\": \"%s\",\n"
               "  \"matplotlib_version\": \"%s\",\n",
               info.kiln_isa.c_str(), CV_VERSION, cairo_version_string(),
               json_escape(info.matplotlib_version).c_str());
  std::fprintf(f,
               "  \"seconds\": %g,\n  \"repeats\": %d,\n  \"warmup_s\": %g,\n  \"seq_len\": %d,\n  \"windows\": %lld,\n",
               opt.seconds, opt.repeats, kWarmupSeconds, kSeqLen, static_cast<long long>(kWindowCount));
  std::fprintf(f, "  \"results\": [\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Stats cpu = stats_of(r.cpu_rates);
    const Stats wall = stats_of(r.wall_rates);
    std::fprintf(f,
                 "    {\"tool\": \"%s\", \"width\": %d, \"height\": %d, \"line_width\": %g, \"threads\": 1, "
                 "\"img_per_s\": %.2f, \"img_per_s_std\": %.2f, \"wall_img_per_s\": %.2f, "
                 "\"wall_img_per_s_std\": %.2f, \"ink_width_px\": %.3f}%s\n",
                 r.tool.c_str(), r.config.width, r.config.height, r.config.line_width, cpu.mean, cpu.stddev, wall.mean,
                 wall.stddev, r.ink_width, i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"ratios\": [\n");
  for (size_t i = 0; i < ratios.size(); ++i) {
    const Ratio& q = ratios[i];
    std::fprintf(f,
                 "    {\"width\": %d, \"height\": %d, \"line_width\": %g, \"peer\": \"%s\", \"kiln_over_peer\": %.3f, "
                 "\"kiln_over_peer_wall\": %.3f}%s\n",
                 q.config.width, q.config.height, q.config.line_width, q.peer.c_str(), q.cpu, q.wall,
                 i + 1 < ratios.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  return std::fclose(f) == 0;
}

// ---- main --------------------------------------------------------------------------------------------------

void options_add(CLI::App& app, Options& opt) {
  app.add_option("--json", opt.json_path, "Also write the results as JSON")->type_name("FILE");
  plot_option_add(app, &opt.plot_path);
  app.add_option("--seconds", opt.seconds, "Length of one repeat (default 1.0)")->type_name("S")->check(positive());
  app.add_option("--repeats", opt.repeats, "Repeats per tool and size (default 3)")
      ->type_name("R")
      ->check(positive());
  app.add_flag_callback("--no-matplotlib", [&opt] { opt.matplotlib = false; }, "Skip the matplotlib peer");
  app.add_option("--dump", opt.dump_dir, "Write window 0 of every tool and size as DIR/<tool>_<W>x<H>.pgm")
      ->type_name("DIR");
  app.add_option("--python", opt.python, "Interpreter for bench/render_matplotlib.py (default /usr/bin/python3)")
      ->type_name("PATH");
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"render_peers: line-chart rendering throughput of kiln against OpenCV, Cairo and matplotlib",
               "render_peers"};
  options_add(app, opt);
  if (const std::optional<int> code = args_parse(app, argc, argv)) return *code;
  if (!opt.dump_dir.empty()) std::filesystem::create_directories(opt.dump_dir);
  cv::setNumThreads(1);

  RunInfo info{git_commit(), cpu_model(), kiln::cpu_isa_name(kiln::cpu_isa_active()), ""};
  std::printf("render_peers: commit %s, %s, kiln ISA %s, OpenCV %s, Cairo %s\n", info.commit.c_str(),
              info.device.c_str(), info.kiln_isa.c_str(), CV_VERSION, cairo_version_string());
  std::printf("%lld windows x %d values, 1 thread, warm-up %g s, %d x %g s per tool and size\n",
              static_cast<long long>(kWindowCount), kSeqLen, kWarmupSeconds, opt.repeats, opt.seconds);
  std::fflush(stdout);

  const Dataset data = dataset_make(12345);
  std::string npy;
  if (!opt.matplotlib) std::fprintf(stderr, "render_peers: matplotlib skipped (--no-matplotlib)\n");
  if (opt.matplotlib) {
    npy = (std::filesystem::temp_directory_path() / ("render_peers_" + std::to_string(getpid()) + ".npy")).string();
    if (!npy_write(npy, data)) {
      std::fprintf(stderr, "render_peers: cannot write %s; skipping matplotlib\n", npy.c_str());
      npy.clear();
    }
  }

  std::vector<Row> rows;
  for (const Config& c : kConfigs) {
    std::vector<std::pair<std::string, std::unique_ptr<Renderer>>> renderers;
    renderers.emplace_back("kiln", renderer_kiln(data, c, kiln::cpu_isa_active()));
    renderers.emplace_back("kiln-scalar", renderer_kiln(data, c, kiln::CpuIsa::kScalar));
    renderers.emplace_back("opencv", renderer_opencv(data, c));
    renderers.emplace_back("cairo", renderer_cairo(data, c));
    for (auto& [tool, renderer] : renderers) {
      std::fprintf(stderr, "  %s %dx%d ...\n", tool.c_str(), c.width, c.height);
      rows.push_back(measure(tool, *renderer, data, c, opt));
    }
    if (!npy.empty()) {
      std::fprintf(stderr, "  matplotlib %dx%d ...\n", c.width, c.height);
      if (std::optional<Row> row = measure_matplotlib(npy, c, opt, &info.matplotlib_version)) rows.push_back(*row);
    }
  }
  if (!npy.empty()) std::filesystem::remove(npy);

  const std::vector<Ratio> ratios = ratios_of(rows);
  print_tables(rows, ratios);
  if (!opt.json_path.empty()) {
    if (!json_write(opt.json_path, info, opt, rows, ratios)) {
      std::fprintf(stderr, "render_peers: cannot write %s\n", opt.json_path.c_str());
      return 1;
    }
    std::printf("\nwrote %s\n", opt.json_path.c_str());
  }
  if (!opt.plot_path.empty()) {  // the JSON as written, read back
    const std::string results = opt.json_path.empty() ? opt.plot_path + ".results.json" : opt.json_path;
    if (opt.json_path.empty() && !json_write(results, info, opt, rows, ratios)) return 1;
    std::ifstream in(results);
    const nlohmann::json parsed = nlohmann::json::parse(in, nullptr, false);
    if (opt.json_path.empty()) std::filesystem::remove(results);
    if (parsed.is_discarded()) return 1;
    return plot_write(parsed, opt.plot_path, "render_peers: images/s, kiln and its peers");
  }
  return 0;
}
