#include "apps/segment/segment_smoother.h"

#include <algorithm>

#include "apps/segment/mask_region.h"
#include "apps/segment/mask_temporal.h"

namespace kiln {

namespace {

size_t map_bytes(int32_t width, int32_t height) { return static_cast<size_t>(width) * height * sizeof(float); }

}  // namespace

Result<ProbabilityMap> SegmentSmoother::update(SegmentFrame& frame, const SegmentSettings& settings) {
  m_output_current = false;
  bool lost = false;  // the frame's output could not come down: the device is gone
  if (!frame.dropped && frame.output_device) {
    // Frames inferred before the job gave the device up still come with their outputs there: they come down.
    if (m_engine.device_probabilities_on()) {
      const Status st = update_on_device(frame, settings);
      if (st.is_ok()) {
        frame.output_device.reset();
        return result(settings);
      }
      if (!m_engine.device_fallback_allowed(st)) return st;
      m_engine.device_probabilities_end("smoothing on the device: " + st.message());
    }
    const Status down = output_to_host(frame);  // lets the frame's device output go
    if (!down.is_ok()) {
      if (!m_engine.device_fallback_allowed(down)) return down;
      frame.dropped = true;  // the last map stands for it, on the host
      lost = true;
    }
  }
  if (m_on_device && (!frame.dropped || lost)) {
    const Status down = state_to_host();  // lost on failure: the host starts the map again from this frame
    if (!down.is_ok() && !m_engine.device_fallback_allowed(down)) return down;
  }
  update_on_host(frame, settings);
  return result(settings);
}

Status SegmentSmoother::update_on_device(const SegmentFrame& frame, const SegmentSettings& settings) {
  Backend& device = *frame.output_device->backend();
  const int32_t width = frame.prob_width, height = frame.prob_height;
  const bool fresh = width != m_width || height != m_height || (!m_on_device && m_state.empty());
  if (fresh) {  // the previous map says nothing of this one; on failure the host starts it again from the frame
    m_on_device = false;
    m_state.clear();
  }
  const size_t bytes = map_bytes(width, height);
  if (m_device_state.data() == nullptr || m_device_state.bytes() < bytes || m_device_state.backend() != &device) {
    if (m_on_device) KILN_TRY(state_to_host());
    m_device_state.reset();
    KILN_TRY_ASSIGN(m_device_state, DeviceBlock::acquire(device, bytes));
  }
  if (!fresh && !m_on_device) KILN_TRY(device.device_upload(m_state.data(), m_device_state.data(), bytes));
  ProbabilityParams params = frame.output_params;
  params.temporal = fresh ? 0.0f : settings.temporal;
  const ImageView map = image_view_packed(m_device_state.data(), width, height, 1, PixelType::kF32);
  KILN_TRY(m_engine.probability_on_device(device, frame.output_device_view, params, map));
  m_width = width;
  m_height = height;
  m_on_device = true;
  return Status::ok();
}

void SegmentSmoother::update_on_host(const SegmentFrame& frame, const SegmentSettings& settings) {
  if (frame.dropped) {
    if (!m_on_device && m_state.empty()) m_state.assign(static_cast<size_t>(m_width) * m_height, 0.0f);
  } else if (frame.prob_width != m_width || frame.prob_height != m_height || m_state.size() != frame.prob.size()) {
    m_width = frame.prob_width;
    m_height = frame.prob_height;
    m_state = frame.prob;
  } else {
    mask_temporal_smooth(frame.prob.data(), m_state.data(), m_state.size(), settings.temporal);
  }
}

Status SegmentSmoother::output_to_host(SegmentFrame& frame) {
  const ImageView& view = frame.output_device_view;
  const std::shared_ptr<DeviceBlock> memory = std::move(frame.output_device);  // let go whatever happens
  std::vector<float> output(view.packed_bytes() / sizeof(float));
  KILN_TRY(memory->backend()->device_download(view.data, output.data(), view.packed_bytes()));
  frame.prob.resize(static_cast<size_t>(view.width) * view.height);
  const ImageView host = image_view_packed(output.data(), view.width, view.height, view.channels, view.type,
                                           view.layout);
  return SegmentModel::probability_fill(host, frame.output_params, frame.prob.data());
}

Status SegmentSmoother::state_to_host() {
  m_state.resize(static_cast<size_t>(m_width) * m_height);
  const Status st = m_device_state.backend()->device_download(m_device_state.data(), m_state.data(),
                                                              map_bytes(m_width, m_height));
  m_on_device = false;
  if (!st.is_ok()) m_state.clear();  // lost: the next frame starts the stream's map again
  return st;
}

ImageView SegmentSmoother::device_view() const {
  return image_view_packed(m_device_state.data(), m_width, m_height, 1, PixelType::kF32);
}

Result<ProbabilityMap> SegmentSmoother::result(const SegmentSettings& settings) {
  if (!settings.largest_component) {
    if (m_on_device) return ProbabilityMap{device_view(), m_device_state.backend()};
    return ProbabilityMap::on_host(m_state.data(), m_width, m_height);
  }
  // The state goes on seeing every region: one that grows larger than the person's takes over at once.
  if (m_on_device) {
    KILN_TRY_ASSIGN(const float* state, host());
    (void)state;  // host() left the state's copy in m_output
  } else {
    m_output = m_state;
  }
  mask_keep_largest_region(m_output.data(), m_width, m_height, settings.threshold, std::max(1, m_width / 128),
                           &m_scratch);
  m_output_current = true;
  return ProbabilityMap::on_host(m_output.data(), m_width, m_height);
}

Result<const float*> SegmentSmoother::host() {
  if (!m_on_device) return m_output_current ? m_output.data() : m_state.data();
  if (!m_output_current) {
    m_output.resize(static_cast<size_t>(m_width) * m_height);
    KILN_TRY(m_device_state.backend()->device_download(m_device_state.data(), m_output.data(),
                                                       map_bytes(m_width, m_height)));
    m_output_current = true;
  }
  return m_output.data();
}

}  // namespace kiln
