// Layered configuration for kiln render: defaults < config file (the predecessor's config.yaml) < environment
// < command-line flags. The CLI applies the first three here and its own flags last.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "exec/exec_env.h"
#include "apps/render/render_job.h"

namespace kiln {

// Reads the keys kiln understands from a predecessor-style config.yaml:
//   image.seq_len, image.line_width, image.resolution.{width,height,dpi},
//   image.rendering.{mode,gpu_batch_size,fallback_on_error}, image.storage.{format,mode,images_per_file},
//   image.colors.{bullish,bearish} (0..1, white = 1), plus kiln's own image.{stride,style,dtype,compression}.
// Unknown sections (data, paths, pipeline, ...) are ignored and listed in *ignored.
Status render_config_apply_yaml(const std::string& path, RenderJobConfig* config, std::vector<std::string>* ignored);

// GPU_BACKEND (cpu -> mode cpu; cuda|opencl -> only that GPU backend; rocm|mps -> OpenCL, with a note),
// ALL_GPU / RENDER_GPU (false -> mode cpu; true -> a GPU may be used), GPU_BATCH_SIZE, KILN_THREADS.
// GPU_DEVICE_ID and GPU_MEMORY_LIMIT_GB are read when the backend registry is built (backend_options_from_env).
Status render_config_apply_env(RenderJobConfig* config, const EnvLookup& lookup);

}  // namespace kiln
