#include "apps/faces/face_prepare.h"

#include <algorithm>

#include "kiln/image_ops.h"

namespace kiln {

namespace {

constexpr int32_t kEnhanceBelowWidth = 500;  // the predecessor's low-resolution rule: w < 500 or h < 400
constexpr int32_t kEnhanceBelowHeight = 400;

}  // namespace

int32_t face_upscale_factor(const FaceSettings& settings, int32_t width, int32_t height) {
  if (settings.upscale == "off") return 1;
  const int32_t side = std::min(width, height);
  return side <= 150 ? 4 : side <= 250 ? 3 : side <= 600 ? 2 : 1;
}

bool face_enhance_wanted(const FaceSettings& settings, int32_t width, int32_t height) {
  if (settings.enhance == "always") return true;
  return settings.enhance == "auto" && (width < kEnhanceBelowWidth || height < kEnhanceBelowHeight);
}

bool face_prepare_wanted(const FaceSettings& settings, int32_t width, int32_t height) {
  return face_upscale_factor(settings, width, height) > 1 || face_enhance_wanted(settings, width, height);
}

bool face_prepare_second_pass(const FaceSettings& settings) {
  return settings.upscale != "always" && settings.enhance != "always" &&
         (settings.upscale == "auto" || settings.enhance == "auto");
}

std::string face_second_pass_note(int64_t second_pass, int64_t photos) {
  return "; second pass (upscaled, enhanced) on " + std::to_string(second_pass) + " of " + std::to_string(photos) +
         " photos";
}

FaceSettings face_first_pass_settings(const FaceSettings& settings) {
  FaceSettings first = settings;
  first.upscale = "off";
  first.enhance = "off";
  return first;
}

void face_prepare_plan(const VarShapeBatchView& images, const FaceSettings& settings, PreparedImages* out,
                       std::vector<int64_t>* changed, std::vector<ImageShape>* shapes) {
  out->factors.clear();
  out->enhanced.clear();
  changed->clear();
  shapes->clear();
  for (int64_t i = 0; i < images.count; ++i) {
    const ImageView& v = images.images[i];
    const int32_t factor = face_upscale_factor(settings, v.width, v.height);
    const bool enhance = face_enhance_wanted(settings, v.width, v.height);
    out->factors.push_back(factor);
    out->enhanced.push_back(enhance);
    if (factor > 1 || enhance) {
      changed->push_back(i);
      shapes->push_back({v.width * factor, v.height * factor, 3, PixelType::kU8, Layout::kHWC});
    }
  }
}

Status face_prepare_run(const VarShapeBatchView& images, const std::vector<int64_t>& changed,
                        const std::vector<bool>& enhanced, const VarShapeBatchView& storage, OpExecutor& executor,
                        ExecReport* report) {
  if (changed.empty()) return Status::ok();
  std::vector<ImageView> sources;
  for (const int64_t i : changed) sources.push_back(images[i]);
  const VarShapeBatch in = VarShapeBatch::wrap(std::move(sources), images.space);
  ResizeParams resize;
  resize.interp = Interp::kBicubic;
  KILN_TRY(executor.run(OpCall{OpKind::kResize, &resize, in.view(), storage, nullptr}));
  std::vector<ImageView> to_enhance;
  for (size_t k = 0; k < changed.size(); ++k) {
    if (enhanced[static_cast<size_t>(changed[k])]) to_enhance.push_back(storage[static_cast<int64_t>(k)]);
  }
  if (to_enhance.empty()) return Status::ok();
  const EnhanceParams params = enhance_params_predecessor();
  const VarShapeBatch batch = VarShapeBatch::wrap(std::move(to_enhance), storage.space);
  return executor.run(OpCall{OpKind::kEnhance, &params, batch.view(), batch.view(), nullptr}, report);
}

Status face_images_prepare(const VarShapeBatchView& images, const FaceSettings& settings, OpExecutor& executor,
                           PreparedImages* out, ExecReport* report) {
  std::vector<int64_t> changed;
  std::vector<ImageShape> shapes;
  face_prepare_plan(images, settings, out, &changed, &shapes);
  out->storage = VarShapeBatch::allocate(shapes);
  KILN_TRY(face_prepare_run(images, changed, out->enhanced, out->storage.view(), executor, report));
  std::vector<ImageView> views(images.images, images.images + images.count);
  for (size_t k = 0; k < changed.size(); ++k) {
    views[static_cast<size_t>(changed[k])] = out->storage[static_cast<int64_t>(k)];
  }
  out->prepared = VarShapeBatch::wrap(std::move(views));
  return Status::ok();
}

}  // namespace kiln
