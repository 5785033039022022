#include "infer/input_stager.h"

#include <utility>

namespace kiln {

namespace {

// `block` holding at least `bytes` of `backend`: kept when it does, acquired again otherwise.
template <MemorySpace kSpace>
Status block_fit(Backend& backend, size_t bytes, BackendBlock<kSpace>* block) {
  if (block->bytes() >= bytes && block->backend() == &backend) return Status::ok();
  block->reset();
  KILN_TRY_ASSIGN(*block, BackendBlock<kSpace>::acquire(backend, bytes));
  return Status::ok();
}

}  // namespace

InputStager::InputStager(InferSession& session, OpExecutor& executor, const PreprocessParams& params, int32_t width,
                         int32_t height, Layout layout)
    : m_session(session), m_executor(executor), m_params(params), m_width(width), m_height(height), m_layout(layout) {}

size_t InputStager::item_bytes() const { return static_cast<size_t>(m_width) * m_height * 3 * sizeof(float); }

VarShapeBatch InputStager::outputs_over(void* base, int64_t items, MemorySpace space) const {
  std::vector<ImageView> views;
  for (int64_t k = 0; k < items; ++k) {
    views.push_back(image_view_packed(static_cast<uint8_t*>(base) + k * item_bytes(), m_width, m_height, 3,
                                      PixelType::kF32, m_layout));
  }
  return VarShapeBatch::wrap(std::move(views), space);
}

Backend* InputStager::device_path() const {
  Backend* const device = m_session.device_backend();
  const bool open = device != nullptr && !m_device_off.load() && m_executor.options().mode != ExecMode::kCpu &&
                    !m_executor.moved_to_cpu();
  return open ? device : nullptr;
}

Status InputStager::device_failure() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_device_code == Errc::kOk ? Status::ok() : Status(m_device_code, m_device_note);
}

Status InputStager::stage(const VarShapeBatchView& images, StagedInput* input, ExecReport* report) {
  return stage_with(m_params, images, input, report);
}

Status InputStager::stage_nv12(const VarShapeBatchView& planes, YuvMatrix matrix, bool full_range, StagedInput* input,
                               ExecReport* report) {
  if (planes.space != MemorySpace::kDevice) return invalid_argument("NV12 frames are staged from device memory");
  PreprocessParams params = m_params;
  params.nv12 = true;
  params.yuv_matrix = matrix;
  params.yuv_full_range = full_range;
  return stage_with(params, planes, input, report);
}

Status InputStager::stage_with(const PreprocessParams& params, const VarShapeBatchView& images, StagedInput* input,
                               ExecReport* report) {
  input->items = images.count;
  input->on_device = false;
  if (Backend* const device = device_path(); device != nullptr) {
    const Status st = stage_on_device(*device, params, images, input, report);
    if (st.is_ok()) {
      input->on_device = true;
      return st;
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_device_off.exchange(true)) {
      m_device_note = st.message();
      m_device_code = st.code();
    }
  }
  if (images.space == MemorySpace::kDevice) {
    std::lock_guard<std::mutex> lock(m_mutex);
    return Status(Errc::kNotImplemented, "the model's input is staged on the host" +
                                             (m_device_note.empty() ? std::string() : " (" + m_device_note + ")"));
  }
  return stage_on_host(images, input, report);
}

Status InputStager::stage_on_device(Backend& device, const PreprocessParams& params, const VarShapeBatchView& images,
                                    StagedInput* input, ExecReport* report) {
  KILN_TRY(block_fit(device, item_bytes() * static_cast<size_t>(images.count), &input->device));
  const VarShapeBatch out = outputs_over(input->device.data(), images.count, MemorySpace::kDevice);
  const OpCall call{OpKind::kPreprocess, &params, images, out.view(), nullptr};
  KILN_TRY_ASSIGN(const Placement placement, m_executor.place(call));
  if (placement.backend != &device) {
    return Status(Errc::kNotImplemented, "the preprocess is placed on " + placement.backend->name() + " (" +
                                             placement.reason + "), not on " + device.name());
  }
  return m_executor.run(call, report);
}

Status InputStager::stage_on_host(const VarShapeBatchView& images, StagedInput* input, ExecReport* report) {
  KILN_TRY(block_fit(m_session.host_backend(), item_bytes() * static_cast<size_t>(images.count), &input->host));
  const VarShapeBatch out = outputs_over(input->host.data(), images.count, MemorySpace::kHost);
  return m_executor.run(OpCall{OpKind::kPreprocess, &m_params, images, out.view(), nullptr}, report);
}

std::vector<int64_t> InputStager::shape_of(const StagedInput& input) const {
  return m_layout == Layout::kCHW ? std::vector<int64_t>{input.items, 3, m_height, m_width}
                                  : std::vector<int64_t>{input.items, m_height, m_width, 3};
}

std::span<const float> InputStager::values_of(const StagedInput& input) const {
  const size_t values = item_bytes() / sizeof(float) * static_cast<size_t>(input.items);
  return {static_cast<const float*>(input.on_device ? input.device.data() : input.host.data()), values};
}

Status InputStager::run(const StagedInput& input, std::vector<HostTensor>* outputs) {
  if (input.on_device) {
    return m_session.run_bound_from_device(values_of(input), *input.device.backend(), shape_of(input), outputs);
  }
  return m_session.run_bound(values_of(input), shape_of(input), outputs);
}

Status InputStager::run_to_device(const StagedInput& input, std::vector<DeviceTensor>* outputs) {
  return m_session.run_to_device(values_of(input), input.on_device ? input.device.backend() : nullptr,
                                 shape_of(input), outputs);
}

std::string InputStager::where(const InferReport& report) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::string text = report.device_input_runs > 0 ? "device (" + std::to_string(report.device_input_runs) + " runs)"
                                                  : std::string();
  if (!m_device_note.empty()) text += (text.empty() ? "host (" : ", then host (") + m_device_note + ")";
  return text.empty() ? "host" : text;
}

}  // namespace kiln
