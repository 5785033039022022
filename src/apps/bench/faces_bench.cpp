// kiln bench faces: the predecessor's benchmark (face_detection, image_enhancement, thumbnail_creation,
// quality_checks at small 300 x 300, medium 800 x 600 and large 1920 x 1080) on real face photographs, each on the
// GPU and on the CPU for real (the executor's mode, reported per run), in its JSON shape.
#include "apps/bench/faces_bench.h"

#if KILN_HAS_FACES
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "apps/bench/bench_sizes.h"
#include "apps/faces/face_crops.h"
#include "apps/faces/face_prepare.h"
#include "core/thread_pool.h"
#include "kiln/apps/faces.h"
#include "kiln/codec.h"
#include "kiln/image_ops.h"

namespace kiln::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Each photo letterboxed to width x height (the face keeps its shape).
Result<std::vector<ImageBuffer>> photos_at(const std::vector<ImageBuffer>& photos, const BenchSize& size) {
  std::vector<ImageBuffer> out;
  for (const ImageBuffer& photo : photos) {
    ImageBuffer image;
    image.width = size.width;
    image.height = size.height;
    image.channels = 3;
    image.pixels.resize(static_cast<size_t>(size.width) * size.height * 3);
    ResizeParams params;
    params.fit = ResizeFit::kLetterbox;
    params.interp = Interp::kArea;
    const VarShapeBatch in = VarShapeBatch::wrap({photo.view()});
    const VarShapeBatch dst = VarShapeBatch::wrap({image.view()});
    ExecOptions cpu;
    cpu.mode = ExecMode::kCpu;
    KILN_TRY(op_run(OpCall{OpKind::kResize, &params, in.view(), dst.view(), nullptr}, cpu));
    out.push_back(std::move(image));
  }
  return out;
}

// One operation on one device: a callable that processes a batch and says which backend ran it.
class Operation {
 public:
  static Result<std::unique_ptr<Operation>> open(const std::string& name, ExecMode mode, int32_t threads) {
    auto op = std::unique_ptr<Operation>(new Operation(name, mode, threads));
    if (name == "face_detection") {
      ExecSettings exec;
      exec.mode = mode;
      exec.threads = threads;
      exec.fallback_on_error = false;
      FaceSettings settings;
      KILN_TRY_ASSIGN(op->m_analyzer, FaceAnalyzer::open(settings, exec));
    }
    return op;
  }

  Status run(const VarShapeBatchView& images, std::string* backend) {
    ExecReport report;
    if (m_name == "face_detection") {
      std::vector<std::vector<Face>> faces;
      KILN_TRY(m_analyzer->analyze(images, &faces));
      const FaceStageReport r = m_analyzer->report();
      *backend = r.detection.substr(0, r.detection.find(' '));
      return Status::ok();
    }
    if (m_name == "image_enhancement") {
      FaceSettings settings;
      settings.upscale = "off";
      settings.enhance = "always";
      PreparedImages prepared;
      KILN_TRY(face_images_prepare(images, settings, m_executor, &prepared, &report));
    } else if (m_name == "thumbnail_creation") {
      for (int64_t i = 0; i < images.count; ++i) {
        KILN_TRY(face_thumbnail(images.images[i], kFaceThumbnailSide, m_executor.options()).status());
      }
      KILN_TRY_ASSIGN(const Placement placement, m_executor.place(OpCall{OpKind::kResize, &m_resize, images, images, nullptr}));
      report.backend = placement.backend != nullptr ? backend_kind_name(placement.backend->kind()) : "cpu";
    } else if (m_name == "quality_checks") {
      std::vector<QualityMetrics> metrics(static_cast<size_t>(images.count));
      const QualityParams params;
      KILN_TRY(m_executor.run(OpCall{OpKind::kQuality, &params, images, {}, metrics.data()}, &report));
    } else {
      return invalid_argument("bench faces: unknown operation " + m_name);
    }
    *backend = report.backend;
    return Status::ok();
  }

 private:
  Operation(std::string name, ExecMode mode, int32_t threads)
      : m_name(std::move(name)), m_pool(threads), m_executor(executor_options(mode, &m_pool)) {}

  static ExecOptions executor_options(ExecMode mode, ThreadPool* pool) {
    ExecOptions options;
    options.mode = mode;
    options.pool = pool;
    options.fallback_on_error = false;  // a GPU result must come from the GPU
    return options;
  }

  std::string m_name;
  ThreadPool m_pool;
  OpExecutor m_executor;
  std::unique_ptr<FaceAnalyzer> m_analyzer;
  ResizeParams m_resize;
};

nlohmann::json measure(Operation& op, const std::vector<ImageBuffer>& images, const FacesBenchSettings& args) {
  std::vector<double> ms;
  int64_t ok = 0, runs = 0;
  std::string backend, error;
  for (int64_t it = -1; it < args.iterations; ++it) {  // iteration -1: warm-up
    std::vector<ImageView> views;
    for (int64_t b = 0; b < args.batch_size; ++b) {
      const auto index = static_cast<size_t>(std::max<int64_t>(it, 0) * args.batch_size + b) % images.size();
      views.push_back(images[index].view());
    }
    const VarShapeBatch batch = VarShapeBatch::wrap(std::move(views));
    const auto t0 = Clock::now();
    const Status st = op.run(batch.view(), &backend);
    const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (it < 0) continue;
    ++runs;
    if (st.is_ok()) {
      ++ok;
      ms.push_back(elapsed);
    } else if (error.empty()) {
      error = st.message();
    }
  }
  nlohmann::json row;
  row["success_rate"] = runs > 0 ? static_cast<double>(ok) / static_cast<double>(runs) : 0.0;
  row["iterations"] = runs;
  row["batch_size"] = args.batch_size;
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    double total = 0;
    for (double x : ms) total += x;
    const double mean = total / static_cast<double>(ms.size());
    row["mean_time_ms"] = mean;
    row["median_time_ms"] = ms[ms.size() / 2];
    row["min_time_ms"] = ms.front();
    row["max_time_ms"] = ms.back();
    row["mean_throughput"] = static_cast<double>(args.batch_size) * 1e3 / mean;  // images/s
    row["backend"] = backend;
  }
  if (!error.empty()) row["error"] = error;
  return row;
}

}  // namespace

Result<nlohmann::json> faces_bench_run(const FacesBenchSettings& args, const ProgressLine& progress) {
  std::vector<ImageBuffer> photos;
  DecodeOptions decode;
  decode.channels = 3;
  for (const std::string& path : args.photos) {
    KILN_TRY_ASSIGN(ImageBuffer photo, image_decode_file(path, decode));
    photos.push_back(std::move(photo));
  }
  std::vector<std::pair<std::string, ExecMode>> devices;
  if (!args.no_gpu) devices.emplace_back("gpu_true", ExecMode::kGpu);
  if (!args.gpu) devices.emplace_back("gpu_false", ExecMode::kCpu);
  nlohmann::json results, gains;
  for (const std::string& name : args.operations) {
    for (const auto& [key, mode] : devices) {
      auto op = Operation::open(name, mode, args.threads);
      for (const BenchSize& size : kBenchSizes) {
        if (std::find(args.sizes.begin(), args.sizes.end(), size.name) == args.sizes.end()) continue;
        nlohmann::json row;
        if (!op.is_ok()) {
          row = {{"success_rate", 0.0}, {"error", op.status().message()}};
        } else {
          KILN_TRY_ASSIGN(const std::vector<ImageBuffer> images, photos_at(photos, size));
          row = measure(*op.value(), images, args);
        }
        row["width"] = size.width;
        row["height"] = size.height;
        results[name][size.name][key] = row;
        char line[160];
        if (row.contains("mean_time_ms")) {
          std::snprintf(line, sizeof(line), "%9.2f ms %9.1f images/s on %s", row["mean_time_ms"].get<double>(),
                        row["mean_throughput"].get<double>(), row["backend"].get<std::string>().c_str());
        } else {
          std::snprintf(line, sizeof(line), "failed: %s", row.value("error", std::string("?")).c_str());
        }
        if (progress) {
          char text[256];
          std::snprintf(text, sizeof(text), "%-19s %-6s %-9s %s\n", name.c_str(), size.name, key.c_str(), line);
          progress(text);
        }
      }
    }
    for (const BenchSize& size : kBenchSizes) {
      if (!results[name].contains(size.name)) continue;
      const nlohmann::json& r = results[name][size.name];
      if (!r.contains("gpu_true") || !r.contains("gpu_false") || !r["gpu_true"].contains("mean_time_ms") ||
          !r["gpu_false"].contains("mean_time_ms")) {
        continue;
      }
      const double gpu = r["gpu_true"]["mean_time_ms"], cpu = r["gpu_false"]["mean_time_ms"];
      const double gpu_tp = r["gpu_true"]["mean_throughput"], cpu_tp = r["gpu_false"]["mean_throughput"];
      gains[name][size.name] = {{"time_improvement_percent", (cpu - gpu) / cpu * 100},
                                {"throughput_improvement_percent", (gpu_tp - cpu_tp) / cpu_tp * 100}};
    }
  }
  nlohmann::json out;
  out["benchmark_results"] = results;
  out["analysis"]["performance_gains"] = gains.is_null() ? nlohmann::json::object() : gains;
  out["photos"] = args.photos;
  return out;
}

}  // namespace kiln::bench
#endif
