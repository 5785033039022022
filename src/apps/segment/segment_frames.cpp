// SegmentEngine's frames between the decoder, the host and the model's device memory, and each batch's staging
// into the model's input.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "apps/segment/segment_engine.h"
#include "kiln/image_ops.h"
#include "ops/preprocess.h"

namespace kiln {

Status SegmentEngine::batch_stage(Batch<SegmentFrame>& batch, StagedInput* input) {
  ExecReport report;
  std::vector<bool> decoded_on_device;
  for (const auto& item : batch.items) decoded_on_device.push_back(item.request.rgb_device.data() != nullptr);
  // A batch with some frames on the device (inputs without NVDEC beside one with it) is staged there: its host
  // frames go up, which costs less than bringing the others down.
  const bool any = std::find(decoded_on_device.begin(), decoded_on_device.end(), true) != decoded_on_device.end();
  Status st = any ? Status::ok() : Status(Errc::kNotImplemented, "frames on the host");
  // NV12 frames of one conversion are preprocessed straight from NV12, in one kernel; in a batch with other frames
  // (RGB, another matrix or range) they are converted to RGB on the device first.
  const std::optional<ColorParams> nv12 = batch_nv12(batch);
  bool staged_nv12 = false;
  for (auto& item : batch.items) {
    if (st.is_ok() && !nv12 && item.request.device_nv12) st = frame_nv12_to_rgb(&item.request);
    if (st.is_ok() && item.request.rgb_device.data() == nullptr) st = frame_upload(&item.request);
  }
  if (st.is_ok()) {
    std::vector<ImageView> in;
    for (const auto& item : batch.items) in.push_back(item.request.rgb_device_view);
    const VarShapeBatch images = VarShapeBatch::wrap(std::move(in), MemorySpace::kDevice);
    st = nv12 ? m_stager->stage_nv12(images.view(), nv12->yuv_matrix, nv12->yuv_full_range, input, &report)
              : m_stager->stage(images.view(), input, &report);
    staged_nv12 = st.is_ok() && nv12.has_value();
    for (size_t i = 0; i < batch.items.size(); ++i) {
      batch.items[i].request.input_from_device = st.is_ok() && decoded_on_device[i];
    }
  }
  if (!st.is_ok() && any) {  // a kernel or driver error stops the run where the executor would not fall back either
    const Status why = st.code() == Errc::kNotImplemented ? m_stager->device_failure() : st;
    if (!device_fallback_allowed(why)) return why;
  }
  if (!st.is_ok()) {
    std::vector<ImageView> in;
    for (auto& item : batch.items) {
      KILN_TRY(frame_to_host(&item.request));
      in.push_back(item.request.frame.rgb.view());
    }
    const VarShapeBatch images = VarShapeBatch::wrap(std::move(in));
    st = m_stager->stage(images.view(), input, &report);
  }
  if (st.is_ok()) {
    std::lock_guard<std::mutex> lock(m_state_mutex);
    if (m_preprocess_backend.empty()) m_preprocess_backend = report.backend;
    if (staged_nv12 && m_preprocess_nv12.empty()) m_preprocess_nv12 = report.backend;
  }
  return st;
}

std::optional<ColorParams> SegmentEngine::batch_nv12(const Batch<SegmentFrame>& batch) {
  std::optional<ColorParams> shared;
  for (const auto& item : batch.items) {
    const std::optional<ColorParams>& nv12 = item.request.device_nv12;
    if (!nv12) return std::nullopt;
    if (shared && (shared->yuv_matrix != nv12->yuv_matrix || shared->yuv_full_range != nv12->yuv_full_range)) {
      return std::nullopt;
    }
    shared = nv12;
  }
  return shared;
}

Status SegmentEngine::frame_to_device(SegmentFrame* frame, bool as_nv12) {
  Backend* const device = m_stager->device_path();
  if (device == nullptr) return Status(Errc::kNotImplemented, "the model reads its input from host memory");
  const DeviceVideoFrame& picture = *frame->frame.device;
  if (as_nv12) {
    // The planes, packed (luma rows, then the chroma rows): the surface goes back to the decoder at once.
    const int32_t width = picture.width, rows = picture.height, chroma_rows = (picture.height + 1) / 2;
    KILN_TRY_ASSIGN(DeviceBlock block, DeviceBlock::acquire(*device, static_cast<size_t>(width) * (rows + chroma_rows)));
    const ImageView packed = image_view_packed(block.data(), width, rows + chroma_rows, 1, PixelType::kU8);
    const ImageView surface = picture.nv12();
    const ImageView from[2] = {surface.crop(0, 0, width, rows), surface.crop(0, picture.chroma_row, width, chroma_rows)};
    const ImageView to[2] = {packed.crop(0, 0, width, rows), packed.crop(0, rows, width, chroma_rows)};
    KILN_TRY(device->images_upload(VarShapeBatchView{from, 2, MemorySpace::kDevice},
                                   VarShapeBatchView{to, 2, MemorySpace::kDevice}));
    ColorParams to_rgb = picture.to_rgb();
    to_rgb.nv12_chroma_row = 0;
    frame->rgb_device = std::move(block);
    frame->rgb_device_view = packed;
    frame->device_nv12 = to_rgb;
    frame->frame.device.reset();
    return Status::ok();
  }
  const size_t bytes = static_cast<size_t>(picture.width) * picture.height * 3;
  KILN_TRY_ASSIGN(DeviceBlock block, DeviceBlock::acquire(*device, bytes));
  const ImageView out = image_view_packed(block.data(), picture.width, picture.height, 3, PixelType::kU8,
                                          Layout::kHWC);
  KILN_TRY(color_on_device(*device, picture.nv12(), out, picture.to_rgb()));
  frame->rgb_device = std::move(block);
  frame->rgb_device_view = out;
  frame->frame.device.reset();  // the surface goes back to the decoder's pool
  return Status::ok();
}

Status SegmentEngine::frame_nv12_to_rgb(SegmentFrame* frame) {
  const ImageView& nv12 = frame->rgb_device_view;
  Backend& device = *frame->rgb_device.backend();
  const int32_t rows = preprocess_nv12_rows(nv12.height);
  KILN_TRY_ASSIGN(DeviceBlock block, DeviceBlock::acquire(device, static_cast<size_t>(nv12.width) * rows * 3));
  const ImageView out = image_view_packed(block.data(), nv12.width, rows, 3, PixelType::kU8, Layout::kHWC);
  KILN_TRY(color_on_device(device, nv12, out, *frame->device_nv12));
  frame->rgb_device_release();
  frame->rgb_device = std::move(block);
  frame->rgb_device_view = out;
  return Status::ok();
}

Status SegmentEngine::color_on_device(Backend& device, const ImageView& in, const ImageView& out,
                                      const ColorParams& params) {
  const OpCall call{OpKind::kColor, &params, VarShapeBatchView{&in, 1, MemorySpace::kDevice},
                    VarShapeBatchView{&out, 1, MemorySpace::kDevice}, nullptr};
  auto placement = m_executor.place(call);
  if (!placement.is_ok()) {
    return Status(Errc::kNotImplemented, "the colour conversion has no place on the device: " +
                                             placement.status().message());
  }
  if (placement.value().backend != &device) {
    return Status(Errc::kNotImplemented, "the colour conversion is placed on " + placement.value().backend->name() +
                                             " (" + placement.value().reason + "), not on " + device.name());
  }
  return m_executor.run(call);
}

Status SegmentEngine::frame_upload(SegmentFrame* frame) {
  Backend* const device = m_stager->device_path();
  if (device == nullptr) return Status(Errc::kNotImplemented, "the model reads its input from host memory");
  const ImageBuffer& rgb = frame->frame.rgb;
  KILN_TRY_ASSIGN(DeviceBlock block, DeviceBlock::acquire(*device, rgb.pixels.size()));
  KILN_TRY(device->device_upload(rgb.pixels.data(), block.data(), rgb.pixels.size()));
  frame->rgb_device_view =
      image_view_packed(block.data(), rgb.width, rgb.height, 3, PixelType::kU8, Layout::kHWC);
  frame->rgb_device = std::move(block);
  return Status::ok();
}

Status SegmentEngine::frame_from_device(SegmentFrame* frame, const ImageView& image, Backend& producer) {
  if (image.type != PixelType::kU8 || image.channels != 3 || image.layout != Layout::kHWC) {
    return invalid_argument("a frame is uint8 RGB (H, W, 3)");
  }
  const VarShapeBatchView from{&image, 1, MemorySpace::kDevice};
  if (Backend* const device = m_stager->device_path(); device == &producer) {
    KILN_TRY_ASSIGN(DeviceBlock block, DeviceBlock::acquire(*device, image.packed_bytes()));
    const ImageView packed = image_view_packed(block.data(), image.width, image.height, 3, PixelType::kU8);
    KILN_TRY(device->images_upload(from, VarShapeBatchView{&packed, 1, MemorySpace::kDevice}));
    frame->rgb_device_view = packed;
    frame->rgb_device = std::move(block);
    return Status::ok();
  }
  // The rows' whole span in one copy, then packed on the host.
  const size_t row_bytes = static_cast<size_t>(image.width) * 3;
  std::vector<uint8_t> rows(static_cast<size_t>(image.height - 1) * image.row_stride + row_bytes);
  KILN_TRY(producer.device_download(image.data, rows.data(), rows.size()));
  ImageBuffer& rgb = frame->frame.rgb;
  rgb.width = image.width;
  rgb.height = image.height;
  rgb.channels = 3;
  rgb.pixels.resize(row_bytes * image.height);
  for (int32_t y = 0; y < image.height; ++y) {
    std::memcpy(rgb.pixels.data() + y * row_bytes, rows.data() + static_cast<size_t>(y) * image.row_stride, row_bytes);
  }
  return Status::ok();
}

Status SegmentEngine::frame_to_host(SegmentFrame* frame, bool keep_on_device) {
  if (frame->rgb_device.data() == nullptr) return Status::ok();
  if (!frame->frame.rgb.empty()) {  // uploaded from the host (frame_upload): the pixels are still there
    if (!keep_on_device) frame->rgb_device_release();
    return Status::ok();
  }
  if (frame->device_nv12) return frame_nv12_to_host(frame, keep_on_device);
  const ImageView& v = frame->rgb_device_view;
  ImageBuffer& rgb = frame->frame.rgb;
  rgb.width = v.width;
  rgb.height = v.height;
  rgb.channels = 3;
  rgb.pixels.resize(static_cast<size_t>(v.width) * v.height * 3);
  KILN_TRY(frame->rgb_device.backend()->device_download(v.data, rgb.pixels.data(), rgb.pixels.size()));
  if (!keep_on_device) frame->rgb_device_release();
  return Status::ok();
}

Status SegmentEngine::frame_nv12_to_host(SegmentFrame* frame, bool keep_on_device) {
  // Converted where it is while the device can, else its planes come down and are converted on the CPU (the same
  // arithmetic) where the job may fall back.
  const Status on_device = frame_nv12_to_rgb(frame);
  if (on_device.is_ok()) return frame_to_host(frame, keep_on_device);
  if (!device_fallback_allowed(on_device)) return on_device;
  const ImageView& v = frame->rgb_device_view;
  std::vector<uint8_t> planes(v.packed_bytes());
  KILN_TRY(frame->rgb_device.backend()->device_download(v.data, planes.data(), planes.size()));
  const ImageView nv12 = image_view_packed(planes.data(), v.width, v.height, 1, PixelType::kU8);
  ImageBuffer& rgb = frame->frame.rgb;
  rgb.width = v.width;
  rgb.height = preprocess_nv12_rows(v.height);
  rgb.channels = 3;
  rgb.pixels.resize(static_cast<size_t>(rgb.width) * rgb.height * 3);
  ExecOptions on_cpu;
  on_cpu.mode = ExecMode::kCpu;
  on_cpu.pool = m_executor.options().pool;
  const ImageView out = rgb.view();
  KILN_TRY(color_convert(*frame->device_nv12, VarShapeBatchView{&nv12, 1}, VarShapeBatchView{&out, 1}, on_cpu));
  if (!keep_on_device) frame->rgb_device_release();
  return Status::ok();
}

}  // namespace kiln
