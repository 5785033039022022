#include "apps/segment/device_composite.h"

namespace kiln {

Result<double> DeviceComposite::make(SegmentEngine& engine, const FrameMatte& matte, const SegmentFrame& frame,
                                     const ProbabilityMap& map, VideoWriter& video, ImageBuffer* out,
                                     bool* encoder_frame) {
  *encoder_frame = false;
  if (!wanted(frame) || map.device == nullptr || frame.rgb_device.backend() != map.device) {
    return Status(Errc::kNotImplemented, "the composite is made on the host");
  }
  const ImageView host_background = matte.background_rgb();
  Status st;
  if (m_background.data() == nullptr || m_background.backend() != map.device) {
    Result<DeviceBlock> block = DeviceBlock::acquire(*map.device, host_background.packed_bytes());
    st = block.status();
    if (st.is_ok()) {
      m_background = std::move(block).value();
      const VarShapeBatch host = VarShapeBatch::wrap({host_background});
      const VarShapeBatch device = VarShapeBatch::wrap(
          {image_view_packed(m_background.data(), host_background.width, host_background.height, 3, PixelType::kU8)},
          MemorySpace::kDevice);
      st = map.device->images_upload(host.view(), device.view());
      if (!st.is_ok()) m_background.reset();
    }
  }
  Result<double> share = st;
  if (st.is_ok()) {
    const ImageView background = image_view_packed(m_background.data(), host_background.width,
                                                   host_background.height, 3, PixelType::kU8);
    Result<VideoDeviceFrame> target = Status(Errc::kNotImplemented, "the writer's device frames ended");
    if (!m_writer_frames_ended) target = video.device_frame();
    // A writer without device frames says why in its description; the composite then comes down.
    if (!target.is_ok()) m_writer_frames_ended = true;
    share = engine.composite_on_device(matte, frame.rgb_device_view, background, map,
                                       target.is_ok() ? &target.value() : nullptr, out);
    st = share.status();
    *encoder_frame = st.is_ok() && target.is_ok();
  }
  if (st.is_ok()) {
    ++m_made;
    return share;
  }
  if (!engine.device_fallback_allowed(st)) return st;
  m_ended = true;
  m_ended_why = st.message();
  return Status(Errc::kNotImplemented, "the composite on the device: " + st.message());
}

}  // namespace kiln
