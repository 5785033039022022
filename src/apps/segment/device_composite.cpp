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
      st = map.device->device_upload(host_background.data, m_background.data(), host_background.packed_bytes());
      if (!st.is_ok()) m_background.reset();
    }
  }
  const int32_t width = host_background.width, height = host_background.height;
  if (st.is_ok() && (m_composite.data() == nullptr || m_composite.backend() != map.device)) {
    Result<DeviceBlock> block = DeviceBlock::acquire(*map.device, host_background.packed_bytes());
    st = block.status();
    if (st.is_ok()) m_composite = std::move(block).value();
  }
  Result<double> share = st;
  const ImageView composite = image_view_packed(m_composite.data(), width, height, 3, PixelType::kU8);
  if (st.is_ok()) {
    const ImageView background = image_view_packed(m_background.data(), width, height, 3, PixelType::kU8);
    share = engine.composite_on_device(matte, frame.rgb_device_view, background, map, composite);
    st = share.status();
  }
  if (st.is_ok() && !m_writer_frames_ended) {
    const Status encoded = encoder_frame_fill(engine, *map.device, composite, video);
    *encoder_frame = encoded.is_ok();
    if (!encoded.is_ok() && encoded.code() != Errc::kNotImplemented) return encoded;  // stops the job
  }
  if (st.is_ok() && !*encoder_frame) {
    out->width = width;
    out->height = height;
    out->channels = 3;
    out->pixels.resize(host_background.packed_bytes());
    st = map.device->device_download(m_composite.data(), out->pixels.data(), out->pixels.size());
    if (!st.is_ok()) share = st;
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

Status DeviceComposite::encoder_frame_fill(SegmentEngine& engine, Backend& device, const ImageView& composite,
                                           VideoWriter& video) {
  Result<VideoDeviceFrame> frame = video.device_frame();
  Status st = frame.status();
  if (st.is_ok()) st = engine.encoder_frame_fill(device, composite, frame.value());
  if (st.is_ok()) return st;
  if (!engine.device_fallback_allowed(st)) return st;
  // From here on the composites come down and the writer takes them from the host; a writer that never had device
  // frames says why in its description.
  m_writer_frames_ended = true;
  if (st.message().find("no device frames: ") == std::string::npos) m_writer_why = st.message();
  return Status(Errc::kNotImplemented, st.message());
}

}  // namespace kiln
