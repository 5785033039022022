// The process's ONNX Runtime environment and the C++ API's error conversion.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <exception>
#include <new>
#include <string>

#include "kiln/status.h"

namespace kiln {

// Created on first use; ONNX Runtime logs warnings and errors only.
Ort::Env& ort_env();

// Registers, once per device, an ONNX Runtime CUDA arena on `device_id` capped at `max_bytes`, which every session
// made with "session.use_env_allocators" = "1" then allocates from: one budget for all of the process's sessions.
// Later calls for the device return the first call's result (its cap stays).
Status ort_cuda_arena_share(int32_t device_id, uint64_t max_bytes);

// Runs `fn`, turning an Ort::Exception into a Status of `code` prefixed with `what`.
template <typename Fn>
Status ort_call(Errc code, const std::string& what, Fn&& fn) {
  try {
    fn();
    return Status::ok();
  } catch (const Ort::Exception& e) {
    // A provider's allocator that ran out: the caller may run the batch in smaller parts instead of giving the
    // provider up. cudaMalloc failing ("Failed to allocate memory", CUDA's "out of memory"), the arena reaching
    // gpu_mem_limit (BFCArena: "Available memory of N is smaller than requested bytes of M"), cuBLAS and cuDNN
    // workspaces.
    const std::string text = e.what();
    const bool memory = text.find("out of memory") != std::string::npos ||
                        text.find("Failed to allocate memory") != std::string::npos ||
                        text.find("is smaller than requested bytes") != std::string::npos ||
                        text.find("STATUS_ALLOC_FAILED") != std::string::npos;
    return Status(memory ? Errc::kOutOfMemory : code, what + ": " + text);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, what + ": out of memory");
  } catch (const std::exception& e) {
    return Status(code, what + ": " + e.what());
  }
}

}  // namespace kiln
