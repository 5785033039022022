// The image files of a kept face (kiln faces --crops): the face with a margin around its box, a thumbnail of it
// that fits 150 x 150 (the predecessor's), and the aligned 112 x 112 face the embedder saw. Encoded once each.
#pragma once

#include <string>
#include <vector>

#include "kiln/apps/faces.h"

namespace kiln {

inline constexpr int32_t kFaceThumbnailSide = 150;

// The box grown by `margin` of its width and height on each side, clamped to the image.
RectI face_margin_box(const FaceDetection& face, double margin, int32_t width, int32_t height);

// `image` shrunk (area interpolation, aspect kept) to fit max_side x max_side; never enlarged.
Result<ImageBuffer> face_thumbnail(const ImageView& image, int32_t max_side, const ExecOptions& exec = {});

// Writes "<row>.jpg" (margin crop, JPEG q95), "<row>_thumb.jpg" (JPEG q95) and "<row>_aligned.png" (when the face
// has its aligned pixels) into `dir`, crash-safely; returns their paths.
Result<std::vector<std::string>> face_crops_write(const std::string& dir, int64_t row, const ImageView& image,
                                                   const Face& face, double margin);

}  // namespace kiln
