// Adding ONNX Runtime's GPU execution providers to a session's options, on kiln's device and memory limit.
#pragma once

#include <onnxruntime_cxx_api.h>

#include "kiln/infer.h"

namespace kiln {

// Appends `provider` (cuda or tensorrt) to `session_options`; DeviceError with ORT's reason when it cannot load
// (not built into this ONNX Runtime, library or CUDA missing). The CPU provider needs no call. `compute_stream`: a
// cudaStream_t the provider runs on (ONNX Runtime's user compute stream), or nullptr for one of its own.
Status provider_append(Ort::SessionOptions& session_options, InferProvider provider, const InferOptions& options,
                       const BackendOptions& backend, void* compute_stream);

// Under GPU_MEMORY_LIMIT_GB (models.memory_limit_bytes: the models' share of it) the session joins the process's one
// CUDA arena for models; returns the note for its report. Where ONNX Runtime refuses the shared arena, *refused says
// why, and the session is capped alone at the share by provider_append.
std::string models_arena_join(const BackendOptions& models, Ort::SessionOptions& session_options,
                              std::string* refused);

}  // namespace kiln
