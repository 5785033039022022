// How the Python functions take their settings: every keyword is a declared setting (kiln/params.h) of the job or
// op behind the function; the environment applies first, like on the command line.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "kiln/exec.h"
#if KILN_HAS_FACES
#include "kiln/apps/faces.h"
#endif
#include "kiln/ops/render.h"
#if KILN_HAS_SEGMENT
#include "kiln/apps/segment.h"
#endif
#include "kiln/params.h"

namespace kiln::py {

// kiln.render and kiln.render_windows: the render op's parameters and the execution settings.
struct RenderCallSettings {
  RenderParams render;
  ExecSettings exec{.batch_size = 4096};  // images per GPU launch
};
const ParamTable<RenderCallSettings>& render_call_params();

#if KILN_HAS_FACES
// kiln.faces: the face settings and the execution settings (batch_size: images per analysis batch).
struct FacesCallSettings {
  FaceSettings face;
  ExecSettings exec{.batch_size = 32};
};
const ParamTable<FacesCallSettings>& faces_call_params();
#endif

#if KILN_HAS_SEGMENT
// kiln.SegmentPipeline and kiln.segment: the segment settings, the pipeline's (pipeline, max_delay_us, stale_ms,
// provider) and the execution settings, as `kiln segment` names them.
struct SegmentCallSettings {
  SegmentJobConfig job;
};
const ParamTable<SegmentCallSettings>& segment_call_params();
#endif

// The declarations behind a Python function ("render", "render_windows", "window_plan", "render_job", "quality",
// "preprocess", "faces", "segment"), or nullptr.
const ParamSet* job_params(const std::string& function);

// The environment for `op` (KILN_THREADS, GPU_BATCH_SIZE, GPU_BACKEND, ALL_GPU, the op's switch), then the keyword
// arguments. Raises like a Python function for unknown keywords and KilnValueError for bad values.
void settings_apply(const ParamSet& params, void* config, ExecSettings* exec, OpKind op, const pybind11::kwargs& kwargs,
                    const std::string& function);

}  // namespace kiln::py
