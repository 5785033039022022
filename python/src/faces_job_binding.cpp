// _kiln.faces_job: the `kiln faces` job over image files (kiln.faces_job; one piece of it in kiln.distributed.faces).
#include <pybind11/stl.h>

#include "bindings.h"
#include "errors.h"
#include "kiln/apps/faces.h"
#include "params_py.h"

namespace kiln::py {

namespace pyb = pybind11;

namespace {

pyb::dict faces_job_py(const std::vector<std::string>& inputs, const pyb::kwargs& kwargs) {
  FacesJobConfig config;
  status_check(exec_settings_apply_env(&config.exec, env_lookup_process));
  params_apply_kwargs(faces_job_params(), &config, kwargs, "faces_job");
  auto stages = face_stage_modes(config.exec.mode, env_lookup_process);
  status_check(stages.status());
  config.stages = stages.value();
  Result<FacesJobSummary> summary = FacesJobSummary{};
  {
    pyb::gil_scoped_release release;
    summary = faces_job_run(config, ImageInputs{inputs, {}});
  }
  status_check(summary.status());
  const FacesJobSummary& s = summary.value();
  pyb::dict d;
  d["images"] = s.images;
  d["unreadable"] = s.unreadable;
  d["faces"] = s.faces;
  d["accepted"] = s.accepted;
  d["duplicates"] = s.duplicates;
  d["written"] = s.written;
  d["seconds"] = s.seconds;
  d["detection"] = s.stages.detection;
  d["embedding"] = s.stages.embedding;
  d["batch_memory"] = s.stages.batch_memory;
  return d;
}

}  // namespace

void faces_job_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  m.def("faces_job", &faces_job_py, "inputs"_a,
        R"doc(Analyze the faces of image files, folders and @lists into an .h5/.npz output: the `kiln faces` job.

Keywords are `kiln faces`'s settings (output=, jsonl=, dedup=, detector=, shard=, resume=, ...). The GIL is released
while the job runs. Returns a summary dict (images, unreadable, faces, accepted, duplicates, written, seconds).)doc");
}

}  // namespace kiln::py
