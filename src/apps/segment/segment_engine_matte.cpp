// SegmentEngine's mattes: each frame's matte from its probability map, through the engine's executor.
#include <vector>

#include "kiln/ops/color.h"

#include "apps/segment/segment_engine.h"

namespace kiln {

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
  if (!share.is_ok()) return share;
  std::lock_guard<std::mutex> lock(m_state_mutex);
  if (m_matte_backend.empty()) m_matte_backend = report.backend;
  return share;
}

Result<double> SegmentEngine::mask_on_device(const FrameMatte& matte, const ProbabilityMap& map,
                                             const ImageView& device_out, uint8_t white, uint8_t black) {
  ExecReport report;
  KILN_TRY_ASSIGN(const double share, matte.mask_on_device(map, device_out, white, black, m_executor, &report));
  std::lock_guard<std::mutex> lock(m_state_mutex);
  if (m_matte_backend.empty()) m_matte_backend = report.backend;
  return share;
}

Result<double> SegmentEngine::composite_on_device(const FrameMatte& matte, const ImageView& frame,
                                                  const ImageView& background, const ProbabilityMap& map,
                                                  const VideoDeviceFrame* encoder_frame, ImageBuffer* out) {
  ExecReport report;
  const ImageView& shape = background;  // the frame's size, RGB
  KILN_TRY_ASSIGN(const DeviceBlock block, DeviceBlock::acquire(*map.device, shape.packed_bytes()));
  const ImageView composite = image_view_packed(block.data(), shape.width, shape.height, 3, PixelType::kU8);
  KILN_TRY_ASSIGN(const double share,
                  matte.composite_on_device(frame, background, map, composite, m_executor, &report));
  {
    std::lock_guard<std::mutex> lock(m_state_mutex);
    if (m_matte_backend.empty()) m_matte_backend = report.backend;
  }
  if (encoder_frame == nullptr) {
    out->width = shape.width;
    out->height = shape.height;
    out->channels = 3;
    out->pixels.resize(shape.packed_bytes());
    KILN_TRY(map.device->device_download(block.data(), out->pixels.data(), out->pixels.size()));
    return share;
  }
  ColorParams params;
  params.conversion = ColorConversion::kRgbToNv12;
  params.yuv_matrix = encoder_frame->matrix;
  params.yuv_full_range = encoder_frame->full_range;
  params.nv12_chroma_row = encoder_frame->chroma_row;
  const OpCall call{OpKind::kColor, &params, VarShapeBatchView{&composite, 1, MemorySpace::kDevice},
                    VarShapeBatchView{&encoder_frame->nv12, 1, MemorySpace::kDevice}, nullptr};
  KILN_TRY(m_executor.run_on(*map.device, call));
  return share;
}

}  // namespace kiln
