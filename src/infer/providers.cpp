#include "infer/providers.h"

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "infer/ort_env.h"

namespace kiln {

namespace {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

void key_values_split(const KeyValues& kv, std::vector<const char*>* keys, std::vector<const char*>* values) {
  for (const auto& [key, value] : kv) {
    keys->push_back(key.c_str());
    values->push_back(value.c_str());
  }
}

void cuda_append(Ort::SessionOptions& session_options, const BackendOptions& backend, void* compute_stream) {
  const OrtApi& api = Ort::GetApi();
  OrtCUDAProviderOptionsV2* cuda = nullptr;
  Ort::ThrowOnError(api.CreateCUDAProviderOptions(&cuda));
  std::unique_ptr<OrtCUDAProviderOptionsV2, decltype(api.ReleaseCUDAProviderOptions)> owned(
      cuda, api.ReleaseCUDAProviderOptions);
  KeyValues kv = {{"device_id", std::to_string(backend.device_id)}};
  if (backend.memory_limit_bytes > 0) {
    // Under a cap the arena grows by what is asked, not by doubling, so no headroom is lost to rounding.
    kv.emplace_back("gpu_mem_limit", std::to_string(backend.memory_limit_bytes));
    kv.emplace_back("arena_extend_strategy", "kSameAsRequested");
  }
  std::vector<const char*> keys, values;
  key_values_split(kv, &keys, &values);
  Ort::ThrowOnError(api.UpdateCUDAProviderOptions(cuda, keys.data(), values.data(), keys.size()));
  if (compute_stream != nullptr) {
    Ort::ThrowOnError(api.UpdateCUDAProviderOptionsWithValue(cuda, "user_compute_stream", compute_stream));
  }
  session_options.AppendExecutionProvider_CUDA_V2(*cuda);
}

void tensorrt_append(Ort::SessionOptions& session_options, const TensorRtOptions& trt, const BackendOptions& backend,
                     void* compute_stream) {
  const OrtApi& api = Ort::GetApi();
  OrtTensorRTProviderOptionsV2* options = nullptr;
  Ort::ThrowOnError(api.CreateTensorRTProviderOptions(&options));
  std::unique_ptr<OrtTensorRTProviderOptionsV2, decltype(api.ReleaseTensorRTProviderOptions)> owned(
      options, api.ReleaseTensorRTProviderOptions);
  KeyValues kv = {{"device_id", std::to_string(backend.device_id)},
                  {"trt_fp16_enable", trt.fp16 ? "1" : "0"},
                  {"trt_int8_enable", trt.int8 ? "1" : "0"}};
  if (!trt.int8_calibration_table.empty()) {
    // TensorRT reads a relative name inside the engine cache folder: the user meant the working directory.
    kv.emplace_back("trt_int8_calibration_table_name",
                    std::filesystem::absolute(trt.int8_calibration_table).string());
  }
  if (!trt.engine_cache_dir.empty()) {
    kv.emplace_back("trt_engine_cache_enable", "1");
    kv.emplace_back("trt_engine_cache_path", trt.engine_cache_dir);
  }
  if (!trt.timing_cache_dir.empty()) {
    kv.emplace_back("trt_timing_cache_enable", "1");
    kv.emplace_back("trt_timing_cache_path", trt.timing_cache_dir);
  }
  if (!trt.profile_min_shapes.empty()) kv.emplace_back("trt_profile_min_shapes", trt.profile_min_shapes);
  if (!trt.profile_opt_shapes.empty()) kv.emplace_back("trt_profile_opt_shapes", trt.profile_opt_shapes);
  if (!trt.profile_max_shapes.empty()) kv.emplace_back("trt_profile_max_shapes", trt.profile_max_shapes);
  if (backend.memory_limit_bytes > 0) kv.emplace_back("trt_max_workspace_size", std::to_string(backend.memory_limit_bytes));
  std::vector<const char*> keys, values;
  key_values_split(kv, &keys, &values);
  Ort::ThrowOnError(api.UpdateTensorRTProviderOptions(options, keys.data(), values.data(), keys.size()));
  if (compute_stream != nullptr) {
    Ort::ThrowOnError(api.UpdateTensorRTProviderOptionsWithValue(options, "user_compute_stream", compute_stream));
  }
  session_options.AppendExecutionProvider_TensorRT_V2(*options);
}

}  // namespace

Status provider_append(Ort::SessionOptions& session_options, InferProvider provider, const InferOptions& options,
                       const BackendOptions& backend, void* compute_stream) {
  const std::string what = std::string(infer_provider_name(provider)) + " execution provider";
  // Creating a provider's options loads its library, which logs through ONNX Runtime's default logger: that logger
  // exists only once the environment does ("Attempt to use DefaultLogger but none has been registered" in a process
  // whose first session is on a GPU provider).
  ort_env();
  return ort_call(Errc::kDeviceError, what, [&] {
    if (provider == InferProvider::kTensorRt) {
      tensorrt_append(session_options, options.tensorrt, backend, compute_stream);
    }
    // Behind TensorRT too: the nodes it does not take run on CUDA, not on the CPU with copies at each boundary.
    cuda_append(session_options, backend, compute_stream);
  });
}

std::string models_arena_join(const BackendOptions& models, Ort::SessionOptions& session_options,
                              std::string* refused) {
  const std::string gib = std::to_string(static_cast<double>(models.memory_limit_bytes) / double(1 << 30));
  const std::string cap = gib.substr(0, gib.find('.') + 3) + " GiB";
  const Status shared = ort_cuda_arena_share(models.device_id, models.memory_limit_bytes);
  if (shared.is_ok() && ort_call(Errc::kDeviceError, "session options", [&] {
        session_options.AddConfigEntry("session.use_env_allocators", "1");
      }).is_ok()) {
    return "; the models share one " + cap + " CUDA arena";
  }
  *refused = "GPU memory: " + shared.message() + "; this session is capped alone at " + cap;
  return "; this session's CUDA arena capped alone at " + cap;
}

}  // namespace kiln
