#include "infer/ort_env.h"

#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "kiln/infer.h"

namespace kiln {

Ort::Env& ort_env() {
  static Ort::Env* env = new Ort::Env(ORT_LOGGING_LEVEL_ERROR, "kiln");
  return *env;
}

Status ort_cuda_arena_share(int32_t device_id, uint64_t max_bytes) {
  static std::mutex mutex;
  static std::map<int32_t, Status> registered;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = registered.find(device_id); it != registered.end()) return it->second;
  Ort::Env& env = ort_env();
  const Status st = ort_call(Errc::kDeviceError, "a CUDA arena shared by the sessions", [&] {
    const Ort::MemoryInfo memory("Cuda", OrtArenaAllocator, device_id, OrtMemTypeDefault);
    // Grown by what is asked, not by doubling, so that no headroom under the cap is lost to rounding.
    const Ort::ArenaCfg arena(static_cast<size_t>(max_bytes), /*kSameAsRequested*/ 1, -1, -1);
    const std::string device = std::to_string(device_id);
    const char* keys[] = {"device_id"};
    const char* values[] = {device.c_str()};
    Ort::ThrowOnError(Ort::GetApi().CreateAndRegisterAllocatorV2(env, "CUDAExecutionProvider", memory, arena, keys,
                                                                 values, 1));
  });
  registered.emplace(device_id, st);
  return st;
}

OnnxRuntimeInfo onnxruntime_info() {
  OnnxRuntimeInfo info;
  info.version = Ort::GetVersionString();
  info.providers = Ort::GetAvailableProviders();
  return info;
}

namespace {

bool ort_has(const std::vector<std::string>& providers, const char* name) {
  return std::find(providers.begin(), providers.end(), name) != providers.end();
}

// The TensorRT provider of ONNX Runtime 1.29 loads TensorRT 10's runtime: without it the provider cannot start.
bool tensorrt_runtime_found() {
  void* handle = dlopen("libnvinfer.so.10", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

}  // namespace

std::vector<ProviderStatus> infer_provider_statuses() {
  const OnnxRuntimeInfo ort = onnxruntime_info();
  const BackendStatus* cuda = BackendRegistry::instance().status(BackendKind::kCuda);
  const bool device = cuda != nullptr && cuda->available;
  const std::string no_device = "no CUDA device: " + (cuda ? cuda->reason : std::string("CUDA backend not compiled"));
  std::vector<ProviderStatus> out;
  out.push_back({InferProvider::kCpu, true, "always available"});
  for (const auto& [provider, ort_name] : {std::pair{InferProvider::kCuda, "CUDAExecutionProvider"},
                                           std::pair{InferProvider::kTensorRt, "TensorrtExecutionProvider"}}) {
    ProviderStatus status{provider, false, ""};
    if (!ort_has(ort.providers, ort_name)) {
      status.reason = std::string("this ONNX Runtime library is built without it (configure with KILN_ORT_GPU=ON)");
    } else if (!device) {
      status.reason = no_device;
    } else if (provider == InferProvider::kTensorRt && !tensorrt_runtime_found()) {
      status.reason = "TensorRT is not installed (libnvinfer.so.10 not found): sessions asking for it use CUDA";
    } else {
      status.available = true;
      status.reason = "compiled in; its library loads when a session asks for it";
    }
    out.push_back(status);
  }
  return out;
}

}  // namespace kiln
