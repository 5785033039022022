// The environment switches that place an op (the predecessor's GPU_BACKEND, ALL_GPU and <OP>_GPU), shared by
// the render job and the image ops.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/device.h"
#include "kiln/exec.h"
#include "kiln/status.h"

namespace kiln {

// GPU_BACKEND: cpu -> mode cpu; auto -> any GPU; cuda|opencl -> only that GPU backend; rocm|mps -> OpenCL with a
// note. Then ALL_GPU and op_gpu_switch_name(op) (the op's switch wins): false -> mode cpu; true -> mode auto when
// it was cpu. InvalidArgument for values it cannot parse.
Status exec_env_apply(OpKind op, ExecMode* mode, std::optional<BackendKind>* gpu_only,
                      std::vector<std::string>* notes, const EnvLookup& lookup);
// The same with any switch name: a stage of an application (FACE_DETECTION_GPU, ...) rather than an op; nullptr:
// ALL_GPU only.
Status exec_env_apply_switch(const char* gpu_switch, ExecMode* mode, std::optional<BackendKind>* gpu_only,
                             std::vector<std::string>* notes, const EnvLookup& lookup);

}  // namespace kiln
