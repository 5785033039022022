// render_peers: single-thread line-chart rendering throughput of kiln's CPU renderer against OpenCV, Cairo and
// the predecessor's matplotlib method, on the same windows in one run.
//
//   render_peers [--json FILE] [--seconds S] [--repeats R] [--no-matplotlib] [--dump DIR] [--python PATH]
//
// Every tool turns one window of seq_len values into a gray uint8 image (white background, black line) with the
// window's min-max normalization inside the timed loop. Per tool and size: a warm-up, then R repeats of S seconds,
// reported as images per CPU-second of the rendering thread and per wall-clock second (mean ± sample stddev).
#include <cairo.h>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "kiln/image.h"
#include "kiln/ops/render.h"
#include "ops/cpu/render_cpu.h"

namespace {

constexpr int64_t kWindowCount = 1000;
constexpr int32_t kSeqLen = 100;
constexpr int kRing = 4;  // images rendered per call and kept as a reused output buffer
constexpr double kWarmupSeconds = 0.3;
constexpr double kMatplotlibDpi = 100.0;
constexpr int kInkSamples = 16;  // windows averaged for the effective line width

struct Config {
  int32_t width;
  int32_t height;
  float line_width;
};
constexpr std::array<Config, 2> kConfigs = {{{800, 500, 3.0f}, {224, 224, 2.0f}}};

struct Options {
  std::string json_path;
  std::string dump_dir;
  std::string python = "/usr/bin/python3";
  double seconds = 1.0;
  int repeats = 3;
  bool matplotlib = true;
};

// ---- data --------------------------------------------------------------------------------------------------

// A seeded random walk (splitmix64 + Box-Muller rather than std:: distributions, whose output differs between
// standard libraries) and the sliding windows over it: window i is walk[i, i + kSeqLen).
struct Dataset {
  std::vector<float> walk;
  std::vector<int64_t> starts;

  const float* window(int64_t i) const { return walk.data() + starts[static_cast<size_t>(i)]; }
};

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Dataset dataset_make(uint64_t seed) {
  Dataset d;
  uint64_t state = seed;
  auto uniform = [&] { return (static_cast<double>(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53; };
  double price = 100.0;
  d.walk.resize(static_cast<size_t>(kWindowCount + kSeqLen - 1));
  for (float& v : d.walk) {
    v = static_cast<float>(price);
    const double step = std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * std::numbers::pi * uniform());
    price += step;
  }
  d.starts.resize(kWindowCount);
  for (int64_t i = 0; i < kWindowCount; ++i) d.starts[static_cast<size_t>(i)] = i;
  return d;
}

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

// Pixel coordinates of a window's points, the same geometry kiln uses (render_px.h): x_i = i (W-1)/(n-1),
// y = (1 - norm) (H-1), pixel centres at integer coordinates, a flat window on the middle row.
template <typename Emit>
void window_points(const float* v, int32_t n, int32_t width, int32_t height, Emit&& emit) {
  const auto [lo, hi] = std::minmax_element(v, v + n);
  const float vmin = *lo;
  const float span = *hi - vmin;
  const float x_step = static_cast<float>(width - 1) / static_cast<float>(n - 1);
  const float h1 = static_cast<float>(height - 1);
  for (int32_t i = 0; i < n; ++i) {
    const float y = span > 0.0f ? (1.0f - (v[i] - vmin) / span) * h1 : 0.5f * h1;
    emit(static_cast<float>(i) * x_step, y);
  }
}

// ---- renderers ---------------------------------------------------------------------------------------------

// Renders kRing consecutive windows per call into a reused ring of gray images.
class Renderer {
 public:
  virtual ~Renderer() = default;
  virtual void prepare() {}
  virtual void finish() {}
  // Windows [first, first + kRing); image slot i holds window first + i afterwards.
  virtual void render(int64_t first) = 0;
  virtual const uint8_t* image(int slot) const = 0;
  virtual int64_t row_stride() const = 0;
};

class KilnRenderer final : public Renderer {
 public:
  KilnRenderer(const Dataset& data, const Config& config, kiln::CpuIsa isa) : m_data(data), m_isa(isa) {
    m_params.style = kiln::ChartStyle::kLine;
    m_params.width = config.width;
    m_params.height = config.height;
    m_params.line_width = config.line_width;
    m_images.resize(kRing, config.width, config.height, 1, kiln::PixelType::kU8);
    m_view = m_images.view();
  }
  void prepare() override { kiln::cpu_isa_set(m_isa); }
  void finish() override { kiln::cpu_isa_set(kiln::cpu_isa_best()); }
  void render(int64_t first) override {
    kiln::WindowBatch windows;
    windows.series = m_data.walk.data();
    windows.starts = m_data.starts.data() + first;
    windows.count = kRing;
    windows.seq_len = kSeqLen;
    const kiln::Status status = kiln::render_cpu(kiln::RenderCall(m_params, windows, m_view).call(), nullptr);
    if (!status.is_ok()) {
      std::fprintf(stderr, "render_peers: kiln: %s\n", status.to_string().c_str());
      std::exit(1);
    }
  }
  const uint8_t* image(int slot) const override { return static_cast<const uint8_t*>(m_view.image(slot).data); }
  int64_t row_stride() const override { return m_params.width; }

 private:
  const Dataset& m_data;
  kiln::CpuIsa m_isa;
  kiln::RenderParams m_params;
  kiln::ImageBatch m_images;
  kiln::BatchView m_view;
};

// cv::polylines with LINE_AA and thickness = line width on a white CV_8UC1 image. Points carry 4 fractional bits
// (shift = 4) so the subpixel positions match the other tools.
class OpencvRenderer final : public Renderer {
 public:
  OpencvRenderer(const Dataset& data, const Config& config)
      : m_data(data), m_config(config), m_pixels(static_cast<size_t>(kRing) * config.width * config.height) {
    for (int i = 0; i < kRing; ++i) {
      m_images[i] = cv::Mat(config.height, config.width, CV_8UC1, m_pixels.data() + i * image_bytes());
    }
    m_points.reserve(kSeqLen);
  }
  void render(int64_t first) override {
    constexpr int kShift = 4;
    constexpr float kScale = 1 << kShift;
    const int thickness = static_cast<int>(std::lround(m_config.line_width));
    for (int i = 0; i < kRing; ++i) {
      cv::Mat& img = m_images[i];
      img.setTo(cv::Scalar(255));
      m_points.clear();
      window_points(m_data.window(first + i), kSeqLen, m_config.width, m_config.height, [&](float x, float y) {
        m_points.emplace_back(static_cast<int>(std::lround(x * kScale)), static_cast<int>(std::lround(y * kScale)));
      });
      cv::polylines(img, m_points, false, cv::Scalar(0), thickness, cv::LINE_AA, kShift);
    }
  }
  const uint8_t* image(int slot) const override { return m_pixels.data() + slot * image_bytes(); }
  int64_t row_stride() const override { return m_config.width; }

 private:
  size_t image_bytes() const { return static_cast<size_t>(m_config.width) * m_config.height; }

  const Dataset& m_data;
  Config m_config;
  std::vector<uint8_t> m_pixels;
  std::array<cv::Mat, kRing> m_images;
  std::vector<cv::Point> m_points;
};

// Cairo on an A8 surface: paint everything opaque, then stroke with the CLEAR operator, so alpha = 255 (1 -
// coverage) is the gray image itself. Round joins and caps, default antialiasing. Cairo's pixel centres sit at
// half-integers, hence the +0.5.
class CairoRenderer final : public Renderer {
 public:
  CairoRenderer(const Dataset& data, const Config& config)
      : m_data(data),
        m_config(config),
        m_stride(cairo_format_stride_for_width(CAIRO_FORMAT_A8, config.width)),
        m_pixels(static_cast<size_t>(kRing) * m_stride * config.height) {
    for (int i = 0; i < kRing; ++i) {
      m_surfaces[i] = cairo_image_surface_create_for_data(m_pixels.data() + i * image_bytes(), CAIRO_FORMAT_A8,
                                                          config.width, config.height, m_stride);
      cairo_t* cr = cairo_create(m_surfaces[i]);
      cairo_set_line_width(cr, config.line_width);
      cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
      cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
      m_contexts[i] = cr;
    }
  }
  ~CairoRenderer() override {
    for (int i = 0; i < kRing; ++i) {
      cairo_destroy(m_contexts[i]);
      cairo_surface_destroy(m_surfaces[i]);
    }
  }
  CairoRenderer(const CairoRenderer&) = delete;
  CairoRenderer& operator=(const CairoRenderer&) = delete;

  void render(int64_t first) override {
    for (int i = 0; i < kRing; ++i) {
      cairo_t* cr = m_contexts[i];
      cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
      cairo_paint(cr);
      cairo_set_operator(cr, CAIRO_OPERATOR_CLEAR);
      bool move = true;
      window_points(m_data.window(first + i), kSeqLen, m_config.width, m_config.height, [&](float x, float y) {
        (move ? cairo_move_to : cairo_line_to)(cr, x + 0.5, y + 0.5);
        move = false;
      });
      cairo_stroke(cr);
      cairo_surface_flush(m_surfaces[i]);
    }
  }
  const uint8_t* image(int slot) const override { return m_pixels.data() + slot * image_bytes(); }
  int64_t row_stride() const override { return m_stride; }

 private:
  size_t image_bytes() const { return static_cast<size_t>(m_stride) * m_config.height; }

  const Dataset& m_data;
  Config m_config;
  int m_stride;
  std::vector<uint8_t> m_pixels;
  std::array<cairo_surface_t*, kRing> m_surfaces{};
  std::array<cairo_t*, kRing> m_contexts{};
};

// ---- measurement -------------------------------------------------------------------------------------------

struct Stats {
  double mean = 0.0;
  double std = 0.0;
};

Stats stats_of(const std::vector<double>& xs) {
  Stats s;
  if (xs.empty()) return s;
  for (double x : xs) s.mean += x;
  s.mean /= static_cast<double>(xs.size());
  if (xs.size() > 1) {
    double ss = 0.0;
    for (double x : xs) ss += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(ss / static_cast<double>(xs.size() - 1));
  }
  return s;
}

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

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::optional<std::string> command_output(const std::string& command, int* exit_status) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string text;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) text.append(buf, n);
  const int status = pclose(pipe);
  *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return text;
}

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

std::string git_commit() {
  int exit_status = -1;
  const std::optional<std::string> out =
      command_output("git -C " + shell_quote(KILN_SOURCE_DIR) + " rev-parse --short HEAD 2>/dev/null", &exit_status);
  if (!out || exit_status != 0 || out->empty()) return "unknown";
  return out->substr(0, out->find_first_of("\r\n"));
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

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
                r.config.line_width, cpu.mean, cpu.std, wall.mean, wall.std, 1e6 / cpu.mean, r.ink_width);
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
                 r.tool.c_str(), r.config.width, r.config.height, r.config.line_width, cpu.mean, cpu.std, wall.mean,
                 wall.std, r.ink_width, i + 1 < rows.size() ? "," : "");
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

void usage(FILE* f) {
  std::fprintf(f,
               "usage: render_peers [--json FILE] [--seconds S] [--repeats R] [--no-matplotlib] [--dump DIR]\n"
               "                    [--python PATH]\n"
               "  --json FILE      also write the results as JSON\n"
               "  --seconds S      length of one repeat (default 1.0)\n"
               "  --repeats R      repeats per tool and size (default 3)\n"
               "  --no-matplotlib  skip the matplotlib peer\n"
               "  --dump DIR       write window 0 of every tool and size as DIR/<tool>_<W>x<H>.pgm\n"
               "  --python PATH    interpreter for bench/render_matplotlib.py (default /usr/bin/python3)\n");
}

std::optional<Options> options_parse(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--json" && has_value) {
      opt.json_path = argv[++i];
    } else if (arg == "--seconds" && has_value) {
      opt.seconds = std::atof(argv[++i]);
    } else if (arg == "--repeats" && has_value) {
      opt.repeats = std::atoi(argv[++i]);
    } else if (arg == "--dump" && has_value) {
      opt.dump_dir = argv[++i];
    } else if (arg == "--python" && has_value) {
      opt.python = argv[++i];
    } else if (arg == "--no-matplotlib") {
      opt.matplotlib = false;
    } else if (arg == "-h" || arg == "--help") {
      usage(stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "render_peers: bad argument '%s'\n", arg.c_str());
      return std::nullopt;
    }
  }
  if (!(opt.seconds > 0.0) || opt.repeats < 1) {
    std::fprintf(stderr, "render_peers: --seconds must be > 0 and --repeats >= 1\n");
    return std::nullopt;
  }
  return opt;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> parsed = options_parse(argc, argv);
  if (!parsed) {
    usage(stderr);
    return 2;
  }
  const Options& opt = *parsed;
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
    renderers.emplace_back("kiln", std::make_unique<KilnRenderer>(data, c, kiln::cpu_isa_active()));
    renderers.emplace_back("kiln-scalar", std::make_unique<KilnRenderer>(data, c, kiln::CpuIsa::kScalar));
    renderers.emplace_back("opencv", std::make_unique<OpencvRenderer>(data, c));
    renderers.emplace_back("cairo", std::make_unique<CairoRenderer>(data, c));
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
  return 0;
}
