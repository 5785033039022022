// Colour charts on a backend that renders gray images: each channel is a gray render of its plane params
// (render_plane_params) into one scratch batch, then interleaved into the call's RGB images. The CPU renders the
// same planes window by window (render_loops.h), so every backend's colour follows from its gray parity.
#include <vector>

#include "ops/render.h"

namespace kiln {

namespace {

template <typename Pixel>
void interleave(const Pixel* plane, int64_t pixels, int32_t c, Pixel* image) {
  for (int64_t j = 0; j < pixels; ++j) image[j * 3 + c] = plane[j];
}

}  // namespace

Status render_color_planes(const OpCall& call, const std::function<Status(const OpCall&)>& render_gray) {
  const auto& params = *static_cast<const RenderParams*>(call.params);
  const int64_t count = call.out.count;
  const int64_t pixels = static_cast<int64_t>(params.width) * params.height;
  const size_t plane_bytes = static_cast<size_t>(pixels) * pixel_type_size(params.dtype);
  std::vector<uint8_t> scratch(plane_bytes * static_cast<size_t>(count));
  std::vector<ImageView> planes;
  planes.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    planes.push_back(image_view_packed(scratch.data() + static_cast<size_t>(i) * plane_bytes, params.width,
                                       params.height, 1, params.dtype));
  }
  for (int32_t c = 0; c < 3; ++c) {
    const RenderParams plane = render_plane_params(params, c);
    OpCall gray = call;
    gray.params = &plane;
    gray.out = VarShapeBatchView{planes.data(), count, MemorySpace::kHost};
    KILN_TRY(render_gray(gray));
    for (int64_t i = 0; i < count; ++i) {
      if (params.dtype == PixelType::kF32) {
        interleave(static_cast<const float*>(planes[static_cast<size_t>(i)].data), pixels, c,
                   static_cast<float*>(call.out[i].data));
      } else {
        interleave(static_cast<const uint8_t*>(planes[static_cast<size_t>(i)].data), pixels, c,
                   static_cast<uint8_t*>(call.out[i].data));
      }
    }
  }
  return Status::ok();
}

}  // namespace kiln
