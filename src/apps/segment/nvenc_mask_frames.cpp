#include "apps/segment/nvenc_mask_frames.h"

#include <vector>

namespace kiln {

Result<double> NvencMaskFrames::fill(SegmentEngine& engine, const FrameMatte& matte, const ProbabilityMap& map,
                                     VideoWriter& video) {
  if (m_ended || map.device == nullptr) return Status(Errc::kNotImplemented, "the mask is made on the host");
  Result<VideoDeviceFrame> frame = video.device_frame();
  Result<double> share = frame.status();
  if (frame.is_ok()) {
    const VideoDeviceFrame& f = frame.value();
    const ImageView luma = f.nv12.crop(0, 0, f.nv12.width, f.chroma_row);
    share = engine.mask_on_device(matte, map, luma, f.white, f.black);
    if (share.is_ok()) {
      const Status filled = chroma_fill(*map.device, f);
      if (!filled.is_ok()) share = filled;
    }
  }
  const Status st = share.status();
  if (st.is_ok()) return share;
  if (!engine.device_fallback_allowed(st)) return st;
  m_ended = true;
  // A writer that never had device frames says why in its description (the encode line).
  if (st.message().find("no device frames: ") != std::string::npos) return st;
  m_ended_why = st.message();
  return Status(Errc::kNotImplemented, "NVENC's device frames: " + st.message());
}

Status NvencMaskFrames::chroma_fill(Backend& device, const VideoDeviceFrame& frame) {
  const int32_t width = frame.nv12.width, rows = frame.nv12.height - frame.chroma_row;
  if (m_chroma.data() == nullptr || m_chroma.backend() != &device || m_chroma_width != width ||
      m_chroma_rows != rows) {
    std::vector<uint8_t> pairs(static_cast<size_t>(width) * rows);
    for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
      pairs[i] = frame.u;
      pairs[i + 1] = frame.v;
    }
    KILN_TRY_ASSIGN(m_chroma, DeviceBlock::acquire(device, pairs.size()));
    KILN_TRY(device.device_upload(pairs.data(), m_chroma.data(), pairs.size()));
    m_chroma_width = width;
    m_chroma_rows = rows;
  }
  const VarShapeBatch from = VarShapeBatch::wrap(
      {image_view_packed(m_chroma.data(), width, rows, 1, PixelType::kU8)}, MemorySpace::kDevice);
  const VarShapeBatch to =
      VarShapeBatch::wrap({frame.nv12.crop(0, frame.chroma_row, width, rows)}, MemorySpace::kDevice);
  return device.images_upload(from.view(), to.view());
}

}  // namespace kiln
