// Render parameters from Python keyword arguments, and the one place that places and runs a render.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/device.h"
#include "kiln/image.h"
#include "kiln/ops/render.h"
#include "kiln/status.h"

namespace kiln::py {

struct RenderOptions {
  RenderParams params;
  ExecMode mode = ExecMode::kAuto;
  int32_t threads = 0;  // CPU threads; 0 = all
};

// Parses style ("line"|"ohlc"), mode ("auto"|"gpu"|"cpu") and dtype ("uint8"|"float32"); raises KilnValueError.
RenderOptions render_options_make(int32_t width, int32_t height, double line_width, const std::string& style,
                                  const std::string& mode, int32_t threads, const std::string& dtype);

// Validates, places and renders into `out` through op_run, so a GPU error finishes the batch on the CPU. Call
// without the GIL.
Status render_execute(const RenderOptions& options, const WindowBatch& windows, const BatchView& out);

}  // namespace kiln::py
