// kiln bench ops: the image ops per op, image size, backend and batch size: mean time of Backend::run on host
// batches (uploads and downloads included on GPU backends) or, with --resident device, on batches already in a GPU
// backend's memory (the kernels alone; the CPU's batches are in its memory either way), images/s, success rate,
// each GPU backend's improvement over the CPU and, for device batches, the largest difference from the CPU's output.
// The predecessor's benchmark_gpu.py, with every backend really run: the call is validated once, then each backend
// that supports() it runs it directly, so a GPU is never silently replaced by the CPU fallback.
#include "apps/bench/ops_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/bench/bench_stats.h"
#include "apps/bench/ops_resident.h"
#include "apps/bench/ops_workload.h"
#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "kiln/device.h"
#include "kiln/version.h"

namespace kiln::bench {

namespace {

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
    const bench::Stats stats = bench::stats_of(ms);
    row["mean_ms"] = stats.mean;
    row["std_ms"] = stats.stddev;
    row["min_ms"] = *std::min_element(ms.begin(), ms.end());
    row["img_per_s"] = static_cast<double>(call.in.count) / (stats.mean / 1e3);
  }
  return row;
}

// Two calls in flight, from two threads, each on its own pinned batches and a stream the backend lends it: one
// batch's copies overlap the other's kernels and copies the other way, as a loader with two batches in flight runs
// (what the copy bound assumes). Adds the images/s of the two together, or why they could not run.
void two_in_flight_add(Backend& backend, const OpCall& first, const OpCall& second, int32_t iterations,
                       nlohmann::json& row) {
  Status errors[2];
  const auto run = [&](const OpCall& call, Status* error, int32_t times) {
    for (int32_t i = 0; i < times && error->is_ok(); ++i) *error = backend.run(call, {});
  };
  run(second, &errors[1], 1);  // the second batches' first call: their device allocations
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::jthread other(run, std::cref(second), &errors[1], iterations);  // joined on every way out
    run(first, &errors[0], iterations);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const Status& error : errors) {
    if (!error.is_ok()) {
      row["two_in_flight_error"] = error.to_string();
      return;
    }
  }
  row["two_in_flight_img_per_s"] = 2.0 * iterations * static_cast<double>(first.in.count) / seconds;
}

std::string text(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string text(const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  return line;
}

std::string row_text(const nlohmann::json& row, const std::string& op, const BenchSize& size, int64_t batch) {
  const std::string backend = row["backend"].get<std::string>();
  if (row.contains("supported") && !row["supported"].get<bool>()) {
    return text("%-16s %-6s %5lld %-8s unsupported%s%s\n", op.c_str(), size.name, static_cast<long long>(batch),
                backend.c_str(), row.contains("error") ? ": " : "", row.value("error", std::string()).c_str());
  }
  if (!row.contains("mean_ms")) {
    return text("%-16s %-6s %5lld %-8s error: %s\n", op.c_str(), size.name, static_cast<long long>(batch),
                backend.c_str(), row.value("error", std::string("failed")).c_str());
  }
  char vs_cpu[32] = "";
  if (row.contains("improvement_pct")) {
    std::snprintf(vs_cpu, sizeof vs_cpu, "%+.1f%%", row["improvement_pct"].get<double>());
  }
  char diff[256] = "";
  if (row.contains("max_abs_diff_vs_cpu")) {
    std::snprintf(diff, sizeof diff, "  max |diff| vs cpu %g", row["max_abs_diff_vs_cpu"].get<double>());
  }
  if (row.contains("two_in_flight_img_per_s")) {
    const size_t used = std::strlen(diff);
    std::snprintf(diff + used, sizeof diff - used, "  two in flight %.1f img/s",
                  row["two_in_flight_img_per_s"].get<double>());
  }
  if (row.contains("of_copy_bound")) {
    const size_t used = std::strlen(diff);
    const bool down = row["copy_bound_direction"] == "download";
    std::snprintf(diff + used, sizeof diff - used, "  %.0f%% of the %s bound (%.0f img/s at %.1f GB/s)",
                  row["of_copy_bound"].get<double>() * 100.0, down ? "download" : "upload",
                  row["copy_bound_img_per_s"].get<double>(),
                  row[down ? "download_gb_per_s" : "upload_gb_per_s"].get<double>());
  }
  return text("%-16s %-6s %5lld %-8s %10.3f %9.3f %11.1f %7.0f%% %9s%s\n", op.c_str(), size.name,
              static_cast<long long>(batch), backend.c_str(), row["mean_ms"].get<double>(), row["std_ms"].get<double>(),
              row["img_per_s"].get<double>(), row["success_rate"].get<double>() * 100.0, vs_cpu, diff);
}

// A pinned-batch row's bound: images/s the backend's measured copy rates let through, in the direction that limits
// (inputs go up while outputs come down: the bus carries both at once), and the row's share of it.
void copy_bound_add(Backend& backend, const Workload& workload, nlohmann::json& row) {
  static std::map<Backend*, Result<CopyRates>> rates;  // measured once per backend and run
  auto it = rates.find(&backend);
  if (it == rates.end()) it = rates.emplace(&backend, copy_bytes_per_s(backend)).first;
  if (!it->second.is_ok()) {
    row["copy_bound_error"] = it->second.status().to_string();
    return;
  }
  const auto per_image = [](const VarShapeBatch& batch) {
    size_t bytes = 0;
    for (const ImageView& v : batch.images()) bytes += v.packed_bytes();
    return batch.count() > 0 ? static_cast<double>(bytes) / static_cast<double>(batch.count()) : 0.0;
  };
  const CopyRates& rate = it->second.value();
  const double up = rate.up / per_image(workload.in);
  const double out_bytes = per_image(workload.out);  // 0 for quality: its metrics are a few bytes
  const double down = out_bytes > 0 ? rate.down / out_bytes : up;
  const double bound = std::min(up, down);
  row["upload_gb_per_s"] = rate.up / 1e9;
  row["download_gb_per_s"] = rate.down / 1e9;
  row["copy_bound_img_per_s"] = bound;
  row["copy_bound_direction"] = down < up ? "download" : "upload";
  // Against the better of one call at a time and two in flight.
  const double best = std::max(row.value("img_per_s", 0.0), row.value("two_in_flight_img_per_s", 0.0));
  if (best > 0) row["of_copy_bound"] = best / bound;
}

// One row per backend for `op` on `batch` images of `size`, appended to out["results"]; GPU rows also get their
// gain over the CPU row, appended to out["analysis"]["performance_gains"].
void bench_op(const std::string& op, const BenchSize& size, int64_t batch, const std::vector<Backend*>& backends,
              const OpsBenchSettings& f, ThreadPool& pool, const TableLine& table, nlohmann::json& out) {
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
  std::vector<nlohmann::json> rows;
  std::vector<std::pair<size_t, ResidentCall>> resident;  // device-batch calls by row, checked after the CPU's
  for (Backend* backend : backends) {
    nlohmann::json row = base;
    const bool held = f.resident != "host" && backend->is_gpu();
    const bool on_device = held && f.resident == "device";
    row["resident"] = held ? f.resident : "host";
    if (!valid.is_ok()) {
      row["backend"] = backend->name();
      row["error"] = valid.to_string();
      row["iterations"] = 0;
      row["success_rate"] = 0.0;
    } else if (held) {
      auto made = ResidentCall::make(*backend, *workload.value(), on_device);
      if (made.is_ok()) {
        row.update(bench_op_backend(*backend, made.value().call(), f.iterations, nullptr));
        if (!on_device && row.contains("mean_ms")) {
          auto second = ResidentCall::make(*backend, *workload.value(), false);
          if (second.is_ok()) {
            two_in_flight_add(*backend, made.value().call(), second.value().call(), f.iterations, row);
          } else {
            row["two_in_flight_error"] = second.status().to_string();
          }
        }
        resident.emplace_back(rows.size(), std::move(made).value());
        if (!on_device) copy_bound_add(*backend, *workload.value(), row);
      } else {
        row["backend"] = backend->name();
        row["supported"] = made.status().code() != Errc::kNotImplemented;
        row["error"] = f.resident + " batches: " + made.status().to_string();
      }
    } else {
      row.update(bench_op_backend(*backend, call, f.iterations, backend->is_gpu() ? nullptr : &pool));
    }
    rows.push_back(row);
  }
  // The CPU runs last (the registry's order). The held batches are compared with its reference mode (the per-pixel
  // math every backend shares; its AVX2 paths may differ from it by a level), run once more into the host batch.
  bool cpu_ran = !rows.empty() && rows.back()["backend"] == "cpu" && rows.back().contains("mean_ms");
  if (cpu_ran && !resident.empty()) {
    const CpuIsa isa = cpu_isa_active();
    cpu_isa_set(CpuIsa::kScalar);
    cpu_ran = backends.back()->run(call, RunContext{&pool}).is_ok();
    cpu_isa_set(isa);
  }
  for (auto& [index, call_on_device] : resident) {
    if (!cpu_ran || !rows[index].contains("mean_ms")) continue;
    auto diff = call_on_device.max_abs_diff(*workload.value());
    if (diff.is_ok()) rows[index]["max_abs_diff_vs_cpu"] = diff.value();
    else rows[index]["error"] = "comparing with the CPU: " + diff.status().to_string();
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
    if (table) table(row_text(row, op, size, batch));
    out["results"].push_back(row);
  }
}

}  // namespace

Result<nlohmann::json> ops_bench_run(const OpsBenchSettings& f, const TableLine& table) {
  KILN_TRY_ASSIGN(const ExecMode mode, exec_mode_parse(f.mode));
  if (f.iterations < 1) return invalid_argument("bench ops: --iterations must be >= 1");
  if (f.resident != "host" && f.resident != "pinned" && f.resident != "device") {
    return invalid_argument("bench ops: --resident must be host, pinned or device");
  }
  const std::vector<std::string>& names = workload_op_names();
  const std::vector<std::string> ops = f.ops.empty() ? names : f.ops;
  for (const auto& op : ops) {
    if (std::find(names.begin(), names.end(), op) == names.end()) {
      return invalid_argument("bench ops: unknown op '" + op + "' (" + workload_op_names_text() + ")");
    }
  }
  std::vector<BenchSize> sizes;
  for (const BenchSize& size : kBenchSizes) {
    if (std::find(f.sizes.begin(), f.sizes.end(), size.name) != f.sizes.end()) sizes.push_back(size);
  }
  for (int64_t b : f.batch_sizes) {
    if (b < 1) return invalid_argument("bench ops: batch sizes must be >= 1");
  }
  std::vector<Backend*> backends;
  for (const auto& backend : BackendRegistry::instance().backends()) {
    if (mode == ExecMode::kCpu && backend->is_gpu()) continue;
    if (mode == ExecMode::kGpu && !backend->is_gpu()) continue;
    backends.push_back(backend.get());
  }
  if (backends.empty()) {
    return Status(Errc::kDeviceError, "bench ops: no GPU backend available (kiln devices says why)");
  }
  ThreadPool pool(f.threads);

  nlohmann::json out;
  out["kiln_version"] = KILN_VERSION_STRING;
  out["mode"] = f.mode;
  out["resident"] = f.resident;
  out["cpu_threads"] = pool.size();
  out["iterations"] = f.iterations;
  out["sizes"] = nlohmann::json::object();
  for (const BenchSize& s : sizes) out["sizes"][s.name] = {s.width, s.height};
  out["results"] = nlohmann::json::array();
  out["analysis"]["performance_gains"] = nlohmann::json::array();
  if (table) {
    table(text("%-16s %-6s %5s %-8s %10s %9s %11s %8s %9s\n", "op", "size", "batch", "backend", "mean ms", "std ms",
               "img/s", "success", "vs cpu"));
  }
  for (const auto& op : ops) {
    for (const BenchSize& size : sizes) {
      for (int64_t batch : f.batch_sizes) bench_op(op, size, batch, backends, f, pool, table, out);
    }
  }
  return out;
}


}  // namespace kiln::bench
