#include "py_jobs.h"

#include "errors.h"
#include "kiln/apps/images.h"
#include "kiln/apps/merge.h"
#if KILN_HAS_ONNX
#include "kiln/apps/precision.h"
#endif
#include "kiln/apps/render.h"
#include "params_py.h"

namespace kiln::py {

const ParamTable<RenderCallSettings>& render_call_params() {
  static const ParamTable<RenderCallSettings> table = [] {
    using S = RenderCallSettings;
    ParamTable<S> t;
    t.include(render_params(), [](S& s) -> RenderParams& { return s.render; });
    t.include(exec_params(), [](S& s) -> ExecSettings& { return s.exec; });
    return t;
  }();
  return table;
}

#if KILN_HAS_FACES
const ParamTable<FacesCallSettings>& faces_call_params() {
  static const ParamTable<FacesCallSettings> table = [] {
    using S = FacesCallSettings;
    ParamTable<S> t;
    t.include(face_params(), [](S& s) -> FaceSettings& { return s.face; });
    t.include(exec_params(), [](S& s) -> ExecSettings& { return s.exec; });
    return t;
  }();
  return table;
}
#endif

#if KILN_HAS_SEGMENT
const ParamTable<SegmentCallSettings>& segment_call_params() {
  static const ParamTable<SegmentCallSettings> table = [] {
    using S = SegmentCallSettings;
    ParamTable<S> t;
    t.include(segment_job_params(), [](S& s) -> SegmentJobConfig& { return s.job; },
              {"pipeline", "max_delay_us", "stale_ms", "queue_size", "provider", "model", "activation", "person_class",
               "letterbox", "threshold", "temporal", "feather", "mode", "threads", "batch_size", "fallback_on_error"});
    return t;
  }();
  return table;
}
#endif

const ParamSet* job_params(const std::string& function) {
#if KILN_HAS_SEGMENT
  if (function == "segment") return &segment_call_params();
#endif
#if KILN_HAS_FACES
  if (function == "faces") return &faces_call_params();
  if (function == "faces_job") return &faces_job_params();
#endif
  if (function == "render" || function == "render_windows") return &render_call_params();
  if (function == "window_plan") return &window_params();
  if (function == "render_job") return &render_job_params();
  if (function == "merge") return &merge_params();
#if KILN_HAS_ONNX
  if (function == "model_convert") return &model_convert_params();
  if (function == "model_quantize") return &model_quantize_params();
#endif
  if (function == "quality") return &quality_job_params();
  if (function == "preprocess") return &preprocess_job_params();
  return nullptr;
}

void settings_apply(const ParamSet& params, void* config, ExecSettings* exec, OpKind op, const pybind11::kwargs& kwargs,
                    const std::string& function) {
  if (exec != nullptr) status_check(exec_settings_apply_env(exec, op, env_lookup_process));
  params_apply_kwargs(params, config, kwargs, function);
}

}  // namespace kiln::py
