// Per-stage placement of the face pipeline, with the predecessor's environment switches.
#include <cstdlib>

#include "kiln/apps/faces.h"

namespace kiln {

namespace {

// The variable that decided a stage's mode, as "NAME=value" (the stage's switch wins over ALL_GPU, and both over
// GPU_BACKEND=cpu), or "".
std::string deciding_variable(const char* gpu_switch, const EnvLookup& lookup) {
  for (const char* name : {gpu_switch, "ALL_GPU", "GPU_BACKEND"}) {
    const char* value = lookup(name);
    if (value == nullptr || *value == '\0') continue;
    if (std::string(name) == "GPU_BACKEND" && std::string(value) != "cpu") continue;
    return std::string(name) + "=" + value;
  }
  return "";
}

}  // namespace

FaceStageModes face_stage_modes_all(ExecMode mode) {
  FaceStageModes stages;
  for (FaceStage* stage : {&stages.detection, &stages.embedding, &stages.enhancement, &stages.quality}) {
    stage->mode = mode;
  }
  return stages;
}

Result<FaceStageModes> face_stage_modes(ExecMode mode, const EnvLookup& lookup) {
  FaceStageModes stages = face_stage_modes_all(mode);
  const std::pair<FaceStage*, const char*> switches[] = {{&stages.detection, "FACE_DETECTION_GPU"},
                                                         {&stages.embedding, "FACE_EMBEDDING_GPU"},
                                                         {&stages.enhancement, "IMAGE_ENHANCEMENT_GPU"},
                                                         {&stages.quality, "QUALITY_CHECKS_GPU"}};
  for (const auto& [stage, name] : switches) {
    KILN_TRY(exec_mode_apply_env(name, &stage->mode, lookup));
    if (stage->mode != mode) stage->why = deciding_variable(name, lookup);
  }
  return stages;
}

}  // namespace kiln
