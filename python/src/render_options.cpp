#include "render_options.h"

#include <optional>

#include "core/thread_pool.h"
#include "errors.h"
#include "kiln/exec.h"

namespace kiln::py {

namespace {
constexpr int64_t kGpuBatchLimit = 4096;  // images per GPU launch before FallbackRenderer halves on OOM
}

RenderOptions render_options_make(int32_t width, int32_t height, double line_width, const std::string& style,
                                  const std::string& mode, int32_t threads, const std::string& dtype) {
  RenderOptions o;
  o.params.width = width;
  o.params.height = height;
  o.params.line_width = static_cast<float>(line_width);
  Result<ChartStyle> parsed_style = chart_style_parse(style);
  status_check(parsed_style.status());
  o.params.style = parsed_style.value();
  Result<ExecMode> parsed_mode = exec_mode_parse(mode);
  status_check(parsed_mode.status());
  o.mode = parsed_mode.value();
  if (dtype == "uint8" || dtype == "u8") {
    o.params.dtype = PixelType::kU8;
  } else if (dtype == "float32" || dtype == "f32") {
    o.params.dtype = PixelType::kF32;
  } else {
    raise_value_error("dtype must be 'uint8' or 'float32', got '" + dtype + "'");
  }
  o.threads = threads;
  return o;
}

Status render_execute(const RenderOptions& options, const WindowBatch& windows, const BatchView& out) {
  KILN_TRY(render_validate(options.params, windows));
  const RenderCall call(options.params, windows, out);
  ExecOptions exec;
  exec.mode = options.mode;
  exec.gpu_batch_limit = kGpuBatchLimit;
  KILN_TRY_ASSIGN(const Placement placement, placement_choose(BackendRegistry::instance(), exec.mode, call.call()));
  // A pool per call: cheap next to rendering, and safe in forked DataLoader workers (no threads inherited).
  std::optional<ThreadPool> pool;
  if (!placement.backend->is_gpu() && windows.count > 1 && options.threads != 1) {
    pool.emplace(options.threads);
    exec.pool = &*pool;
  }
  return op_run(call.call(), exec);
}

}  // namespace kiln::py
