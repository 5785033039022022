// ONNX model loading (kiln infer/faces/segment --model M.onnx): ONNX Runtime parses the protobuf and builds the
// graph on the CPU provider; kiln then describes its inputs and outputs. Loading only: no warm-up run.
#include <span>

#include "kiln/infer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::InferOptions options;
  options.mode = kiln::ExecMode::kCpu;
  options.threads = 1;
  options.warmup_runs = 0;
  auto session = kiln::InferSession::open_bytes(std::span<const uint8_t>(data, size), options);
  if (session.is_ok()) {
    (void)session.value()->info();
  }
  return 0;
}
