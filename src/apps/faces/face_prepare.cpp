#include "apps/faces/face_prepare.h"

#include <algorithm>

#include "kiln/image_ops.h"

namespace kiln {

namespace {

constexpr int32_t kEnhanceBelowWidth = 500;  // the predecessor's low-resolution rule: w < 500 or h < 400
constexpr int32_t kEnhanceBelowHeight = 400;

}  // namespace

int32_t face_upscale_factor(const FaceSettings& settings, int32_t width, int32_t height) {
  if (settings.upscale != "auto") return 1;
  const int32_t side = std::min(width, height);
  return side <= 150 ? 4 : side <= 250 ? 3 : side <= 600 ? 2 : 1;
}

bool face_enhance_wanted(const FaceSettings& settings, int32_t width, int32_t height) {
  if (settings.enhance == "always") return true;
  return settings.enhance == "auto" && (width < kEnhanceBelowWidth || height < kEnhanceBelowHeight);
}

Status face_images_prepare(const VarShapeBatchView& images, const FaceSettings& settings, OpExecutor& executor,
                           PreparedImages* out, ExecReport* report) {
  out->factors.clear();
  out->enhanced.clear();
  std::vector<ImageShape> shapes;
  std::vector<int64_t> changed;
  for (int64_t i = 0; i < images.count; ++i) {
    const ImageView& v = images.images[i];
    const int32_t factor = face_upscale_factor(settings, v.width, v.height);
    const bool enhance = face_enhance_wanted(settings, v.width, v.height);
    out->factors.push_back(factor);
    out->enhanced.push_back(enhance);
    if (factor > 1 || enhance) {
      changed.push_back(i);
      shapes.push_back({v.width * factor, v.height * factor, 3, PixelType::kU8, Layout::kHWC});
    }
  }
  out->storage = VarShapeBatch::allocate(shapes);
  std::vector<ImageView> views(images.images, images.images + images.count);
  if (!changed.empty()) {
    std::vector<ImageView> sources;
    for (const int64_t i : changed) sources.push_back(images.images[i]);
    const VarShapeBatch in = VarShapeBatch::wrap(sources);
    ResizeParams resize;
    resize.interp = Interp::kBicubic;
    KILN_TRY(executor.run(OpCall{OpKind::kResize, &resize, in.view(), out->storage.view(), nullptr}));
    std::vector<ImageView> to_enhance;
    for (size_t k = 0; k < changed.size(); ++k) {
      const ImageView prepared = out->storage[static_cast<int64_t>(k)];
      if (out->enhanced[static_cast<size_t>(changed[k])]) to_enhance.push_back(prepared);
      views[static_cast<size_t>(changed[k])] = prepared;
    }
    if (!to_enhance.empty()) {
      const EnhanceParams params = enhance_params_predecessor();
      const VarShapeBatch batch = VarShapeBatch::wrap(std::move(to_enhance));
      KILN_TRY(executor.run(OpCall{OpKind::kEnhance, &params, batch.view(), batch.view(), nullptr}, report));
    }
  }
  out->prepared = VarShapeBatch::wrap(std::move(views));
  return Status::ok();
}

}  // namespace kiln
