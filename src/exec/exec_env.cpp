#include "exec/exec_env.h"

#include <algorithm>
#include <cctype>

namespace kiln {

namespace {

Result<bool> env_switch_parse(const char* name, const char* value) {
  ParamSpec spec;
  spec.type = ParamType::kBool;
  KILN_TRY_ASSIGN(const ParamValue parsed, param_parse(spec, value, name));
  return std::get<bool>(parsed);
}

}  // namespace

Status exec_env_apply(OpKind op, ExecMode* mode, std::optional<BackendKind>* gpu_only,
                      std::vector<std::string>* notes, const EnvLookup& lookup) {
  return exec_env_apply_switch(op_gpu_switch_name(op), mode, gpu_only, notes, lookup);
}

Status exec_env_apply_switch(const char* gpu_switch, ExecMode* mode, std::optional<BackendKind>* gpu_only,
                             std::vector<std::string>* notes, const EnvLookup& lookup) {
  if (const char* backend = lookup("GPU_BACKEND"); backend != nullptr && *backend != '\0') {
    std::string name = backend;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (name == "cpu") {
      *mode = ExecMode::kCpu;
    } else if (name == "auto") {
      gpu_only->reset();
    } else if (name == "cuda") {
      *gpu_only = BackendKind::kCuda;
    } else if (name == "opencl") {
      *gpu_only = BackendKind::kOpenCL;
    } else if (name == "rocm" || name == "mps") {
      *gpu_only = BackendKind::kOpenCL;
      if (notes != nullptr) {
        notes->push_back("GPU_BACKEND=" + name + ": kiln has no " + (name == "rocm" ? "ROCm" : "Metal") +
                         " backend; using an OpenCL GPU if there is one");
      }
    } else {
      return invalid_argument("GPU_BACKEND='" + std::string(backend) + "': expected auto, cuda, opencl, rocm, mps or cpu");
    }
    if (name != "cpu" && *mode == ExecMode::kCpu) *mode = ExecMode::kAuto;  // env beats the file
  }
  // The op's own switch wins over ALL_GPU.
  std::optional<bool> use_gpu;
  for (const char* name : {"ALL_GPU", gpu_switch}) {
    if (name == nullptr) continue;
    if (const char* value = lookup(name); value != nullptr && *value != '\0') {
      KILN_TRY_ASSIGN(use_gpu, env_switch_parse(name, value));
    }
  }
  if (use_gpu.has_value()) {
    if (!*use_gpu) {
      *mode = ExecMode::kCpu;
    } else if (*mode == ExecMode::kCpu) {
      *mode = ExecMode::kAuto;
    }
  }
  return Status::ok();
}

}  // namespace kiln
