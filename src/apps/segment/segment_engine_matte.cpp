// SegmentEngine's mattes: each frame's matte from its probability map, through the engine's executor.
#include <vector>

#include "kiln/ops/color.h"

#include "apps/segment/segment_engine.h"

namespace kiln {

void SegmentEngine::matte_backend_record(const ExecReport& report) {
  std::lock_guard<std::mutex> lock(m_state_mutex);
  if (m_matte_backend.empty()) m_matte_backend = report.backend;
}

Result<double> SegmentEngine::matte_render(const FrameMatte& matte, const ImageView& frame, const ProbabilityMap& map,
                                           ImageBuffer* out) {
  ExecReport report;
  Result<double> share = matte.render(frame, map, out, m_executor, &report);
  if (!share.is_ok() && map.device != nullptr && device_fallback_allowed(share.status())) {
    device_probabilities_end("the matte on the device: " + share.status().message());
    std::vector<float> host(static_cast<size_t>(map.view.width) * map.view.height);
    KILN_TRY(map.device->device_download(map.view.data, host.data(), host.size() * sizeof(float)));
    report = ExecReport();
    share = matte.render(frame, ProbabilityMap::on_host(host.data(), map.view.width, map.view.height), out,
                         m_executor, &report);
  }
  if (share.is_ok()) matte_backend_record(report);
  return share;
}

Result<double> SegmentEngine::mask_on_device(const FrameMatte& matte, const ProbabilityMap& map,
                                             const ImageView& device_out, uint8_t white, uint8_t black) {
  ExecReport report;
  KILN_TRY_ASSIGN(const double share, matte.mask_on_device(map, device_out, white, black, m_executor, &report));
  matte_backend_record(report);
  return share;
}

Result<double> SegmentEngine::composite_on_device(const FrameMatte& matte, const ImageView& frame,
                                                  const ImageView& background, const ProbabilityMap& map,
                                                  const ImageView& device_out) {
  ExecReport report;
  KILN_TRY_ASSIGN(const double share,
                  matte.composite_on_device(frame, background, map, device_out, m_executor, &report));
  matte_backend_record(report);
  return share;
}

Status SegmentEngine::blur_on_device(const FrameMatte& matte, Backend& device, const ImageView& frame,
                                     const ImageView& device_out) {
  return matte.blur_on_device(device, frame, device_out, m_executor);
}

Status SegmentEngine::encoder_frame_fill(Backend& device, const ImageView& rgb, const VideoDeviceFrame& frame) {
  ColorParams params;
  params.conversion = ColorConversion::kRgbToNv12;
  params.yuv_matrix = frame.matrix;
  params.yuv_full_range = frame.full_range;
  params.nv12_chroma_row = frame.chroma_row;
  const OpCall call{OpKind::kColor, &params, VarShapeBatchView{&rgb, 1, MemorySpace::kDevice},
                    VarShapeBatchView{&frame.nv12, 1, MemorySpace::kDevice}, nullptr};
  return m_executor.run_on(device, call);
}

}  // namespace kiln
