// kiln bench render: per backend and batch size, kernel-only time (device events on GPUs; the render call on
// the CPU) and end-to-end images/s (upload + kernel + download into host memory), with estimates for 85k, 1M
// and 40M images. The predecessor's test_gpu_performance.py, measured instead of extrapolated from one run.
//
// kiln bench ops: the image ops per op, image size, backend and batch size: mean time of Backend::run on host
// batches (uploads and downloads included on GPU backends), images/s, success rate and each GPU backend's
// improvement over the CPU. The predecessor's benchmark_gpu.py, with every backend really run: the call is
// validated once, then each backend that supports() it runs it directly, so a GPU is never silently replaced by
// the CPU fallback.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>

#include "cli/commands.h"
#include "core/buffer_pool.h"
#include "core/thread_pool.h"
#include "kiln/device.h"
#include "kiln/ops/color.h"
#include "kiln/ops/render.h"
#include "kiln/ops/enhance.h"
#include "kiln/ops/mask.h"
#include "kiln/ops/normalize.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/quality.h"
#include "kiln/ops/resize.h"
#include "kiln/ops/warp.h"
#include "kiln/apps/render.h"
#include "kiln/version.h"

namespace kiln::cli {

namespace {

struct BenchFlags {
  std::vector<int64_t> batch_sizes{1, 10, 100, 1000, 5000};
  int32_t width = 800, height = 500, seq_len = 100;
  float line_width = 3.0f;
  std::string style = "line";
  double seconds = 1.0;  // per (backend, batch size)
  int32_t threads = 0;
  bool json = false;
};

struct Sample {
  double seconds = 0;
  double kernel_ms = 0;
};

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }
double stddev(const std::vector<double>& v) {
  const double m = mean(v);
  double sum = 0;
  for (double x : v) sum += (x - m) * (x - m);
  return v.size() > 1 ? std::sqrt(sum / static_cast<double>(v.size() - 1)) : 0.0;
}

Result<nlohmann::json> bench_one(Backend& backend, const RenderParams& params, const Series& series, int64_t batch,
                                 const BenchFlags& f, ThreadPool* pool) {
  std::vector<int64_t> starts(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) starts[static_cast<size_t>(i)] = i % (series.rows - f.seq_len + 1);
  const WindowBatch windows{series.values.data(), series.channels, starts.data(), batch, f.seq_len};
  const size_t image_bytes = static_cast<size_t>(params.width) * params.height;
  KILN_TRY_ASSIGN(PoolBlock host, backend.host_acquire(image_bytes * static_cast<size_t>(batch)));
  const BatchView out{reinterpret_cast<void*>(host.handle), batch, params.width, params.height, 1, PixelType::kU8,
                      static_cast<int64_t>(image_bytes)};
  std::vector<double> seconds;
  std::vector<double> kernel_ms;
  const RenderCall call(params, windows, out);
  Status status = op_validate(call.call());
  if (status.is_ok()) status = backend.run(call.call(), RunContext{pool});  // warm-up: program build, first allocations
  const auto start = std::chrono::steady_clock::now();
  while (status.is_ok() && (seconds.size() < 3 || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < f.seconds)) {
    OpTimings timings;
    const auto t0 = std::chrono::steady_clock::now();
    status = backend.run(call.call(), RunContext{pool, nullptr, &timings});
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    kernel_ms.push_back(backend.is_gpu() ? timings.kernel_ms : seconds.back() * 1e3);
    if (seconds.size() >= 1000) break;
  }
  backend.host_release(host);
  KILN_TRY(status);
  const double img_per_s = static_cast<double>(batch) / mean(seconds);
  nlohmann::json row;
  row["backend"] = backend.name();
  const auto devices = backend.devices();
  row["device"] = devices.empty() ? "" : devices.front().name;
  row["batch_size"] = batch;
  row["iterations"] = seconds.size();
  row["e2e_ms_mean"] = mean(seconds) * 1e3;
  row["e2e_ms_std"] = stddev(seconds) * 1e3;
  row["kernel_ms_mean"] = mean(kernel_ms);
  row["kernel_ms_std"] = stddev(kernel_ms);
  row["img_per_s"] = img_per_s;
  row["kernel_img_per_s"] = static_cast<double>(batch) / (mean(kernel_ms) / 1e3);
  row["d2h_gb_per_s"] = static_cast<double>(image_bytes) * img_per_s / 1e9;
  row["estimate_s"] = {{"85k", 85887 / img_per_s}, {"1M", 1e6 / img_per_s}, {"40M", 4e7 / img_per_s}};
  return row;
}

int bench_render(const BenchFlags& f) {
  RenderParams params;
  params.width = f.width;
  params.height = f.height;
  params.line_width = f.line_width;
  auto style = chart_style_parse(f.style);
  if (!style.is_ok()) return exit_with(style.status());
  params.style = style.value();
  const int64_t largest = *std::max_element(f.batch_sizes.begin(), f.batch_sizes.end());
  const Series series = series_demo(std::max<int64_t>(largest, 1000) + f.seq_len);
  ThreadPool pool(f.threads);
  nlohmann::json out;
  out["kiln_version"] = KILN_VERSION_STRING;
  out["width"] = f.width;
  out["height"] = f.height;
  out["line_width"] = f.line_width;
  out["style"] = f.style;
  out["seq_len"] = f.seq_len;
  out["cpu_threads"] = pool.size();
  out["results"] = nlohmann::json::array();
  if (!f.json) {
    std::printf("%-8s %-28s %6s %10s %10s %12s %12s %9s %9s %9s\n", "backend", "device", "batch", "e2e ms", "kernel ms",
                "img/s", "kernel img/s", "85k s", "1M s", "40M h");
  }
  for (const auto& backend : BackendRegistry::instance().backends()) {
    for (int64_t batch : f.batch_sizes) {
      auto row = bench_one(*backend, params, series, batch, f, backend->is_gpu() ? nullptr : &pool);
      if (!row.is_ok()) {
        std::fprintf(stderr, "kiln: %s batch %lld: %s\n", backend->name().c_str(), static_cast<long long>(batch),
                     row.status().message().c_str());
        continue;
      }
      const auto& r = row.value();
      if (!f.json) {
        std::printf("%-8s %-28.28s %6lld %10.2f %10.2f %12.0f %12.0f %9.1f %9.0f %9.2f\n", backend->name().c_str(),
                    r["device"].get<std::string>().c_str(), static_cast<long long>(batch), r["e2e_ms_mean"].get<double>(),
                    r["kernel_ms_mean"].get<double>(), r["img_per_s"].get<double>(), r["kernel_img_per_s"].get<double>(),
                    r["estimate_s"]["85k"].get<double>(), r["estimate_s"]["1M"].get<double>(),
                    r["estimate_s"]["40M"].get<double>() / 3600.0);
        std::fflush(stdout);
      }
      out["results"].push_back(r);
    }
  }
  if (f.json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

// ---- kiln bench ops ----------------------------------------------------------------------------------------

struct OpsFlags {
  std::vector<std::string> ops;  // empty: all of kOpNames
  std::vector<std::string> sizes{"small", "medium", "large"};
  std::vector<int64_t> batch_sizes{1, 8, 32};
  int32_t iterations = 10;
  std::string mode = "auto";
  int32_t threads = 0;
  bool json = false;
};

const std::array<const char*, 9> kOpNames = {"fused_preprocess", "quality",     "resize_bilinear",
                                             "resize_area",      "cvt_gray",    "warp_affine",
                                             "unsharp",          "mask",        "normalize"};
constexpr int64_t kMaxWorkloadBytes = int64_t{2} << 30;  // inputs + outputs of one call
constexpr int32_t kMaskClasses = 21;

struct SizeSpec {
  const char* name;
  int32_t width;
  int32_t height;
};
// The predecessor's benchmark_gpu.py image sizes.
constexpr std::array<SizeSpec, 3> kSizes = {{{"small", 300, 300}, {"medium", 800, 600}, {"large", 1920, 1080}}};

// One op call with everything it points at: batches, parameters, per-image matrices, results.
struct Workload {
  OpKind kind = OpKind::kResize;
  std::string shape;  // "800x600x3 u8 -> 512x512x3 f32 chw"
  VarShapeBatch in, out;
  PreprocessParams preprocess;
  QualityParams quality;
  std::vector<QualityMetrics> metrics;
  ResizeParams resize;
  ColorParams color;
  WarpParams warp;
  std::unique_ptr<float[][6]> matrices;
  EnhanceParams enhance;
  MaskParams mask;
  NormalizeParams normalize;

  const void* params() const {
    switch (kind) {
      case OpKind::kPreprocess: return &preprocess;
      case OpKind::kQuality: return &quality;
      case OpKind::kResize: return &resize;
      case OpKind::kColor: return &color;
      case OpKind::kWarp: return &warp;
      case OpKind::kEnhance: return &enhance;
      case OpKind::kMask: return &mask;
      case OpKind::kNormalize: return &normalize;
      default: return nullptr;
    }
  }
  OpCall call() {
    return OpCall{kind, params(), in.view(), out.view(), metrics.empty() ? nullptr : metrics.data()};
  }
};

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Seeded pixels: u8 uniform, f32 uniform in [-4, 4).
void batch_fill(const VarShapeBatch& batch, uint64_t seed) {
  uint64_t state = seed;
  for (const ImageView& v : batch.images()) {
    const int32_t planes = v.layout == Layout::kCHW ? v.channels : 1;
    const int64_t row_values = static_cast<int64_t>(v.width) * (v.layout == Layout::kHWC ? v.channels : 1);
    for (int32_t p = 0; p < planes; ++p) {
      for (int32_t y = 0; y < v.height; ++y) {
        if (v.type == PixelType::kU8) {
          auto* row = v.row<uint8_t>(y, p);
          for (int64_t x = 0; x < row_values; ++x) row[x] = static_cast<uint8_t>(splitmix(state) >> 56);
        } else if (v.type == PixelType::kF32) {
          auto* row = v.row<float>(y, p);
          for (int64_t x = 0; x < row_values; ++x) {
            row[x] = static_cast<float>(static_cast<double>(splitmix(state) >> 11) * 0x1.0p-53 * 8.0 - 4.0);
          }
        }
      }
    }
  }
}

std::string shape_text(const ImageShape& s) {
  return std::to_string(s.width) + "x" + std::to_string(s.height) + "x" + std::to_string(s.channels) + " " +
         pixel_type_name(s.type) + (s.channels > 1 ? std::string(" ") + layout_name(s.layout) : std::string());
}

// The call `op` makes on `batch` images of `size`; InvalidArgument for an unknown op name.
Result<std::unique_ptr<Workload>> workload_make(const std::string& op, const SizeSpec& size, int64_t batch) {
  auto w = std::make_unique<Workload>();
  const int32_t width = size.width, height = size.height;
  ImageShape in{width, height, 3, PixelType::kU8, Layout::kHWC};
  ImageShape out = in;
  if (op == "fused_preprocess") {
    w->kind = OpKind::kPreprocess;
    w->preprocess.swap_rb = true;
    out = {512, 512, 3, PixelType::kF32, Layout::kCHW};
  } else if (op == "quality") {
    w->kind = OpKind::kQuality;
    w->metrics.resize(static_cast<size_t>(batch));
  } else if (op == "resize_bilinear" || op == "resize_area") {
    w->kind = OpKind::kResize;
    w->resize.interp = op == "resize_area" ? Interp::kArea : Interp::kBilinear;
    out.width = width / 2;
    out.height = height / 2;
  } else if (op == "cvt_gray") {
    w->kind = OpKind::kColor;
    w->color.conversion = ColorConversion::kRgbToGray;
    out.channels = 1;
  } else if (op == "warp_affine") {
    w->kind = OpKind::kWarp;
    out.width = out.height = 112;
    // A face-alignment-like similarity: a square of half the shorter side around the centre, rotated 12 degrees.
    const double side = std::min(width, height) / 2.0, scale = 112.0 / side, angle = 12.0 * 3.14159265358979 / 180.0;
    const double a = scale * std::cos(angle), b = scale * std::sin(angle), cx = width / 2.0, cy = height / 2.0;
    const float m[6] = {static_cast<float>(a), static_cast<float>(-b), static_cast<float>(56.0 - (a * cx - b * cy)),
                        static_cast<float>(b), static_cast<float>(a), static_cast<float>(56.0 - (b * cx + a * cy))};
    w->matrices.reset(new float[static_cast<size_t>(batch)][6]);
    for (int64_t i = 0; i < batch; ++i) std::copy(m, m + 6, w->matrices[i]);
    w->warp.matrices = w->matrices.get();
  } else if (op == "unsharp") {
    w->kind = OpKind::kEnhance;
    w->enhance.unsharp_radius = 2.0f;
    w->enhance.unsharp_percent = 150.0f;
    w->enhance.unsharp_threshold = 3;
  } else if (op == "mask") {
    // Segmentation logits at a quarter of the image resolution (a typical output stride), 21 classes.
    w->kind = OpKind::kMask;
    w->mask.activation = MaskActivation::kSoftmax;
    in = {std::max(width / 4, 1), std::max(height / 4, 1), kMaskClasses, PixelType::kF32, Layout::kCHW};
    out = {in.width, in.height, 1, PixelType::kU8, Layout::kCHW};
  } else if (op == "normalize") {
    w->kind = OpKind::kNormalize;
    in = {width, height, 3, PixelType::kF32, Layout::kCHW};
    out = in;
    w->normalize.mean = {0.485f, 0.456f, 0.406f};
    w->normalize.std = {0.229f, 0.224f, 0.225f};
  } else {
    return invalid_argument("bench ops: unknown op '" + op + "'");
  }
  const auto bytes = [](const ImageShape& s) {
    return static_cast<int64_t>(pixel_type_size(s.type)) * s.channels * s.width * s.height;
  };
  if ((bytes(in) + (w->kind == OpKind::kQuality ? 0 : bytes(out))) * batch > kMaxWorkloadBytes) {
    return Status(Errc::kOutOfMemory, "bench ops: " + op + " " + size.name + " batch " + std::to_string(batch) +
                                          " needs more than 2 GiB; skipped");
  }
  w->shape = shape_text(in) + (w->kind == OpKind::kQuality ? std::string(" -> metrics") : " -> " + shape_text(out));
  w->in = VarShapeBatch::allocate(std::vector<ImageShape>(static_cast<size_t>(batch), in));
  batch_fill(w->in, 0x6b696c6e + static_cast<uint64_t>(batch));
  if (w->kind != OpKind::kQuality) w->out = VarShapeBatch::allocate(std::vector<ImageShape>(static_cast<size_t>(batch), out));
  return w;
}

struct OpsRow {
  double mean_ms = 0;
  nlohmann::json json;
};

// Iterations of backend.run on the validated call: one untimed warm-up, then `iterations` timed runs; a failed
// run counts against the success rate and is left out of the time.
nlohmann::json bench_op_backend(Backend& backend, const OpCall& call, int32_t iterations, ThreadPool* pool) {
  nlohmann::json row;
  row["backend"] = backend.name();
  const auto devices = backend.devices();
  row["device"] = devices.empty() ? "" : devices.front().name;
  if (!backend.supports(call)) {
    row["supported"] = false;
    return row;
  }
  row["supported"] = true;
  std::string first_error;
  const RunContext context{pool};
  Status warm = backend.run(call, context);  // program builds, first device allocations
  if (!warm.is_ok()) first_error = "warm-up: " + warm.to_string();
  std::vector<double> ms;
  for (int32_t i = 0; i < iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const Status status = backend.run(call, context);
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (status.is_ok()) {
      ms.push_back(elapsed);
    } else if (first_error.empty()) {
      first_error = status.to_string();
    }
  }
  row["iterations"] = iterations;
  row["successes"] = ms.size();
  row["success_rate"] = iterations > 0 ? static_cast<double>(ms.size()) / iterations : 0.0;
  if (!first_error.empty()) row["error"] = first_error;
  if (!ms.empty()) {
    row["mean_ms"] = mean(ms);
    row["std_ms"] = stddev(ms);
    row["min_ms"] = *std::min_element(ms.begin(), ms.end());
    row["img_per_s"] = static_cast<double>(call.in.count) / (mean(ms) / 1e3);
  }
  return row;
}

int bench_ops(const OpsFlags& f) {
  auto mode = exec_mode_parse(f.mode);
  if (!mode.is_ok()) return exit_with(mode.status());
  if (f.iterations < 1) return exit_with(invalid_argument("bench ops: --iterations must be >= 1"));
  std::vector<std::string> ops = f.ops;
  if (ops.empty()) ops.assign(kOpNames.begin(), kOpNames.end());
  for (const auto& op : ops) {
    if (std::find(kOpNames.begin(), kOpNames.end(), op) == kOpNames.end()) {
      return exit_with(invalid_argument("bench ops: unknown op '" + op + "' (fused_preprocess, quality, resize_bilinear, "
                                        "resize_area, cvt_gray, warp_affine, unsharp, mask, normalize)"));
    }
  }
  std::vector<SizeSpec> sizes;
  for (const auto& name : f.sizes) {
    const auto it = std::find_if(kSizes.begin(), kSizes.end(), [&](const SizeSpec& s) { return name == s.name; });
    if (it == kSizes.end()) return exit_with(invalid_argument("bench ops: unknown size '" + name + "' (small, medium, large)"));
    sizes.push_back(*it);
  }
  for (int64_t b : f.batch_sizes) {
    if (b < 1) return exit_with(invalid_argument("bench ops: batch sizes must be >= 1"));
  }
  std::vector<Backend*> backends;
  for (const auto& backend : BackendRegistry::instance().backends()) {
    if (mode.value() == ExecMode::kCpu && backend->is_gpu()) continue;
    if (mode.value() == ExecMode::kGpu && !backend->is_gpu()) continue;
    backends.push_back(backend.get());
  }
  if (backends.empty()) {
    return exit_with(Status(Errc::kDeviceError, "bench ops: no GPU backend available (kiln devices says why)"));
  }
  ThreadPool pool(f.threads);

  nlohmann::json out;
  out["kiln_version"] = KILN_VERSION_STRING;
  out["mode"] = f.mode;
  out["cpu_threads"] = pool.size();
  out["iterations"] = f.iterations;
  out["sizes"] = nlohmann::json::object();
  for (const SizeSpec& s : sizes) out["sizes"][s.name] = {s.width, s.height};
  out["results"] = nlohmann::json::array();
  out["analysis"]["performance_gains"] = nlohmann::json::array();
  if (!f.json) {
    std::printf("%-16s %-6s %5s %-8s %10s %9s %11s %8s %9s\n", "op", "size", "batch", "backend", "mean ms", "std ms",
                "img/s", "success", "vs cpu");
  }
  for (const auto& op : ops) {
    for (const SizeSpec& size : sizes) {
      for (int64_t batch : f.batch_sizes) {
        nlohmann::json base{{"op", op}, {"size", size.name}, {"width", size.width}, {"height", size.height},
                            {"batch_size", batch}};
        auto workload = workload_make(op, size, batch);
        Status valid = workload.is_ok() ? Status::ok() : workload.status();
        OpCall call;
        if (valid.is_ok()) {
          call = workload.value()->call();
          base["shape"] = workload.value()->shape;
          valid = op_validate(call);
        }
        std::map<std::string, double> cpu_ms;
        std::vector<nlohmann::json> rows;
        for (Backend* backend : backends) {
          nlohmann::json row = base;
          if (!valid.is_ok()) {
            row["backend"] = backend->name();
            row["error"] = valid.to_string();
            row["iterations"] = 0;
            row["success_rate"] = 0.0;
          } else {
            row.update(bench_op_backend(*backend, call, f.iterations, backend->is_gpu() ? nullptr : &pool));
          }
          rows.push_back(row);
        }
        // Improvement % = (cpu time - gpu time) / cpu time, the predecessor's definition; speedup = cpu / gpu.
        const auto cpu_row = std::find_if(rows.begin(), rows.end(), [](const nlohmann::json& r) {
          return r["backend"] == "cpu" && r.contains("mean_ms");
        });
        for (auto& row : rows) {
          if (row["backend"] != "cpu" && row.contains("mean_ms") && cpu_row != rows.end()) {
            const double cpu = (*cpu_row)["mean_ms"].get<double>(), gpu = row["mean_ms"].get<double>();
            row["improvement_pct"] = (cpu - gpu) / cpu * 100.0;
            row["speedup"] = cpu / gpu;
            out["analysis"]["performance_gains"].push_back({{"op", op}, {"size", size.name}, {"batch_size", batch},
                                                            {"backend", row["backend"]},
                                                            {"improvement_pct", row["improvement_pct"]},
                                                            {"speedup", row["speedup"]}});
          }
          if (!f.json) {
            const std::string backend = row["backend"].get<std::string>();
            if (row.contains("supported") && !row["supported"].get<bool>()) {
              std::printf("%-16s %-6s %5lld %-8s unsupported\n", op.c_str(), size.name, static_cast<long long>(batch),
                          backend.c_str());
            } else if (!row.contains("mean_ms")) {
              std::printf("%-16s %-6s %5lld %-8s error: %s\n", op.c_str(), size.name, static_cast<long long>(batch),
                          backend.c_str(), row.value("error", std::string("failed")).c_str());
            } else {
              char vs_cpu[32] = "";
              if (row.contains("improvement_pct")) std::snprintf(vs_cpu, sizeof vs_cpu, "%+.1f%%", row["improvement_pct"].get<double>());
              std::printf("%-16s %-6s %5lld %-8s %10.3f %9.3f %11.1f %7.0f%% %9s\n", op.c_str(), size.name,
                          static_cast<long long>(batch), backend.c_str(), row["mean_ms"].get<double>(),
                          row["std_ms"].get<double>(), row["img_per_s"].get<double>(),
                          row["success_rate"].get<double>() * 100.0, vs_cpu);
            }
            std::fflush(stdout);
          }
          out["results"].push_back(row);
        }
      }
    }
  }
  if (f.json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace

Runner bench_command_add(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Measure kiln on this machine");
  bench->require_subcommand(1);
  auto* render = bench->add_subcommand("render", "Render throughput per backend and batch size");
  auto f = std::make_shared<BenchFlags>();
  render->add_option("--batch-sizes", f->batch_sizes, "Batch sizes (default 1 10 100 1000 5000)");
  render->add_option("--width", f->width, "Image width");
  render->add_option("--height", f->height, "Image height");
  render->add_option("--line-width", f->line_width, "Line width");
  render->add_option("--seq-len", f->seq_len, "Window length");
  render->add_option("--style", f->style, "line | ohlc");
  render->add_option("--seconds", f->seconds, "Time per backend and batch size (at least 3 iterations)");
  render->add_option("--threads", f->threads, "CPU backend threads (default: all)");
  render->add_flag("--json", f->json, "Print JSON");

  auto* ops = bench->add_subcommand("ops", "Image-op time per op, image size, backend and batch size");
  auto g = std::make_shared<OpsFlags>();
  ops->add_option("--ops", g->ops,
                  "Ops, comma-separated (default all: fused_preprocess, quality, resize_bilinear, resize_area, "
                  "cvt_gray, warp_affine, unsharp, mask, normalize)")
      ->delimiter(',');
  ops->add_option("--sizes", g->sizes, "small (300x300), medium (800x600), large (1920x1080); default all")
      ->delimiter(',');
  ops->add_option("--batch", g->batch_sizes, "Batch sizes (default 1,8,32)")->delimiter(',');
  ops->add_option("--iterations", g->iterations, "Timed runs per op, size, backend and batch (default 10)");
  ops->add_option("--mode", g->mode, "auto: every available backend; gpu: GPU backends only; cpu: the CPU only");
  ops->add_option("--threads", g->threads, "CPU backend threads (default: all)");
  ops->add_flag("--json", g->json, "Print JSON");
  return [f, g, ops] { return ops->parsed() ? bench_ops(*g) : bench_render(*f); };
}

}  // namespace kiln::cli
