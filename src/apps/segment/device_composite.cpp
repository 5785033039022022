#include "apps/segment/device_composite.h"

namespace kiln {

Result<double> DeviceComposite::make(SegmentEngine& engine, const FrameMatte& matte, const SegmentFrame& frame,
                                     const ProbabilityMap& map, VideoWriter& video, ImageBuffer* out,
                                     bool* encoder_frame) {
  *encoder_frame = false;
  if (!wanted(frame) || map.device == nullptr || frame.rgb_device.backend() != map.device) {
    return Status(Errc::kNotImplemented, "the composite is made on the host");
  }
  const bool blur = matte.output() == SegmentOutput::kBlur;
  const ImageView host_background = matte.background_rgb();  // the matte's frame size (a blur's: no pixels)
  const int32_t width = host_background.width, height = host_background.height;
  if (frame.rgb_device_view.width != width || frame.rgb_device_view.height != height) {
    return Status(Errc::kNotImplemented, "the frame is not the matte's size: made on the host");
  }
  const size_t bytes = host_background.packed_bytes();
  Status st;
  if (m_background.data() == nullptr || m_background.backend() != map.device) {
    Result<DeviceBlock> block = DeviceBlock::acquire(*map.device, bytes);
    st = block.status();
    if (st.is_ok() && !blur) {  // a composite's background goes up once; a blur's is each frame's own
      st = map.device->device_upload(host_background.data, block.value().data(), bytes);
    }
    if (st.is_ok()) m_background = std::move(block).value();
  }
  if (st.is_ok() && (m_composite.data() == nullptr || m_composite.backend() != map.device)) {
    Result<DeviceBlock> block = DeviceBlock::acquire(*map.device, bytes);
    st = block.status();
    if (st.is_ok()) m_composite = std::move(block).value();
  }
  const ImageView background = image_view_packed(m_background.data(), width, height, 3, PixelType::kU8);
  if (st.is_ok() && blur) st = engine.blur_on_device(matte, *map.device, frame.rgb_device_view, background);
  Result<double> share = st;
  const ImageView composite = image_view_packed(m_composite.data(), width, height, 3, PixelType::kU8);
  if (st.is_ok()) {
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
    out->pixels.resize(bytes);
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
