#include "apps/faces/face_crops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kiln/image_ops.h"

namespace kiln {

RectI face_margin_box(const FaceDetection& face, double margin, int32_t width, int32_t height) {
  const double mx = face.box[2] * margin;
  const double my = face.box[3] * margin;
  const auto x0 = static_cast<int32_t>(std::clamp(std::floor(face.box[0] - mx), 0.0, width - 1.0));
  const auto y0 = static_cast<int32_t>(std::clamp(std::floor(face.box[1] - my), 0.0, height - 1.0));
  const auto x1 = static_cast<int32_t>(std::clamp(std::ceil(face.box[0] + face.box[2] + mx), x0 + 1.0, 1.0 * width));
  const auto y1 = static_cast<int32_t>(std::clamp(std::ceil(face.box[1] + face.box[3] + my), y0 + 1.0, 1.0 * height));
  return {x0, y0, x1 - x0, y1 - y0};
}

Result<ImageBuffer> face_thumbnail(const ImageView& image, int32_t max_side, const ExecOptions& exec) {
  const double scale = std::min(1.0, static_cast<double>(max_side) / std::max(image.width, image.height));
  ImageBuffer out;
  out.width = std::max(1, static_cast<int32_t>(std::lround(image.width * scale)));
  out.height = std::max(1, static_cast<int32_t>(std::lround(image.height * scale)));
  out.channels = image.channels;
  out.pixels.resize(static_cast<size_t>(out.width) * out.height * out.channels);
  const VarShapeBatch in = VarShapeBatch::wrap({image});
  const VarShapeBatch dst = VarShapeBatch::wrap({out.view()});
  ResizeParams params;
  params.interp = Interp::kArea;
  KILN_TRY(op_run(OpCall{OpKind::kResize, &params, in.view(), dst.view(), nullptr}, exec));
  return out;
}

Result<std::vector<std::string>> face_crops_write(const std::string& dir, int64_t row, const ImageView& image,
                                                   const Face& face, double margin) {
  char stem[32];
  std::snprintf(stem, sizeof(stem), "%08lld", static_cast<long long>(row));
  const std::string base = dir + "/" + stem;
  const RectI r = face_margin_box(face.detection, margin, image.width, image.height);
  const ImageView crop = image.crop(r.x, r.y, r.width, r.height);
  EncodeOptions jpeg;
  jpeg.format = ImageFormat::kJpeg;
  jpeg.jpeg_quality = 95;
  std::vector<std::string> files = {base + ".jpg", base + "_thumb.jpg"};
  KILN_TRY(image_encode_file(crop, files[0], jpeg));
  ExecOptions cpu;
  cpu.mode = ExecMode::kCpu;  // one small image: not worth a GPU transfer
  KILN_TRY_ASSIGN(const ImageBuffer thumbnail, face_thumbnail(crop, kFaceThumbnailSide, cpu));
  KILN_TRY(image_encode_file(thumbnail.view(), files[1], jpeg));
  if (!face.aligned.empty()) {
    files.push_back(base + "_aligned.png");
    EncodeOptions png;
    png.format = ImageFormat::kPng;
    KILN_TRY(image_encode_file(face.aligned.view(), files[2], png));
  }
  return files;
}

}  // namespace kiln
