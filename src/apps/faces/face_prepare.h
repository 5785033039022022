// The predecessor's small-photo rules on decoded pixels (never re-encoded): the upscale factor by the smaller side
// and the enhancement of low-resolution photos, for a batch of RGB u8 images.
#pragma once

#include <vector>

#include "kiln/apps/faces.h"

namespace kiln {

// The smaller side <= 150 -> 4, <= 250 -> 3, <= 600 -> 2, else 1 (upscale auto); 1 (off).
int32_t face_upscale_factor(const FaceSettings& settings, int32_t width, int32_t height);
// enhance always, or auto below 500 x 400.
bool face_enhance_wanted(const FaceSettings& settings, int32_t width, int32_t height);

struct PreparedImages {
  std::vector<int32_t> factors;  // the upscale factor of each image
  std::vector<bool> enhanced;
  VarShapeBatch storage;   // the images that changed
  VarShapeBatch prepared;  // each image as the detector sees it: a view of storage or of the caller's image
};

// Upscales (bicubic) and enhances (contrast x1.15, sharpness x1.1, unsharp 1/120%/3) as the settings say, on
// `executor`'s placement; `report` receives the enhancement's when it ran.
Status face_images_prepare(const VarShapeBatchView& images, const FaceSettings& settings, OpExecutor& executor,
                           PreparedImages* out, ExecReport* report = nullptr);

}  // namespace kiln
