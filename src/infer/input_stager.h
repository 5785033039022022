// A model's input batches, preprocessed where the model reads them. While the session's provider reads a backend's
// device memory in place (CUDA) and the executor places the preprocess on that backend, a batch is preprocessed into
// a DeviceBlock and handed to the model there: no copy to the host and back. Otherwise, and for the rest of the job
// after the device path fails once, into the session's host pool (pinned on the GPU providers), with the executor's
// usual placement and fallback.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/backend_block.h"
#include "infer/device_tensor.h"
#include "infer/host_tensor.h"
#include "kiln/exec.h"
#include "kiln/infer.h"
#include "kiln/ops/preprocess.h"

namespace kiln {

// One staged batch; its blocks are reused by the next stage() call given it when they are large enough.
struct StagedInput {
  HostBlock host;
  DeviceBlock device;
  bool on_device = false;
  int64_t items = 0;
  void reset() { *this = StagedInput(); }
};

class InputStager {
 public:
  // Items of width x height x 3 float32 in `layout`: the model's per-item input is 3 x height x width (CHW) or
  // height x width x 3 (HWC).
  InputStager(InferSession& session, OpExecutor& executor, const PreprocessParams& params, int32_t width,
              int32_t height, Layout layout);

  // Preprocesses `images` into `input`. Thread-safe (the executor and the session's pools are). Images in device
  // memory (the device path's backend's) are staged on the device only: where that path is closed or fails, the
  // error says why and the caller brings them to the host.
  Status stage(const VarShapeBatchView& images, StagedInput* input, ExecReport* report);
  // The same for video frames kept on the device as packed NV12 planes (PreprocessParams::nv12 with this matrix and
  // range): staged on the device only.
  Status stage_nv12(const VarShapeBatchView& planes, YuvMatrix matrix, bool full_range, StagedInput* input,
                    ExecReport* report);
  // The backend whose device memory the model reads in place while the device path is open; else null.
  Backend* device_path() const;
  // Why stage() closed the device path, with the failure's own code (a kernel's DeviceError, OutOfMemory...); OK while
  // stage() has not closed it (it may still be closed by the executor moving the job to the CPU: device_path()).
  // stage() reports a closed path as NotImplemented.
  Status device_failure() const;
  // Runs the model on a staged batch (InferSession::run_bound or run_bound_from_device).
  Status run(const StagedInput& input, std::vector<HostTensor>* outputs);
  // The same with the outputs left in device memory (InferSession::run_to_device, whose NotImplemented says why
  // it cannot: the caller runs run() instead).
  Status run_to_device(const StagedInput& input, std::vector<DeviceTensor>* outputs);
  // Where the model read its input, for a job's summary: "device (N runs)", "host", or "host (why the device path
  // stopped)"; `report`: the session's at the end of the job.
  std::string where(const InferReport& report) const;

 private:
  Status stage_with(const PreprocessParams& params, const VarShapeBatchView& images, StagedInput* input,
                    ExecReport* report);
  Status stage_on_device(Backend& device, const PreprocessParams& params, const VarShapeBatchView& images,
                         StagedInput* input, ExecReport* report);
  Status stage_on_host(const VarShapeBatchView& images, StagedInput* input, ExecReport* report);
  // The batch's output views over `base`, in `space`.
  VarShapeBatch outputs_over(void* base, int64_t items, MemorySpace space) const;
  size_t item_bytes() const;
  std::vector<int64_t> shape_of(const StagedInput& input) const;
  std::span<const float> values_of(const StagedInput& input) const;

  InferSession& m_session;
  OpExecutor& m_executor;
  PreprocessParams m_params;
  int32_t m_width, m_height;
  Layout m_layout;
  std::atomic<bool> m_device_off{false};
  mutable std::mutex m_mutex;
  std::string m_device_note;
  Errc m_device_code = Errc::kOk;
};

}  // namespace kiln
