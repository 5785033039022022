// The predecessor's small-photo rules on decoded pixels (never re-encoded): the upscale factor by the smaller side
// and the enhancement of low-resolution photos, for a batch of RGB u8 images.
#pragma once

#include <string>
#include <vector>

#include "kiln/apps/faces.h"

namespace kiln {

// The smaller side <= 150 -> 4, <= 250 -> 3, <= 600 -> 2, else 1 (upscale auto or always); 1 (off).
int32_t face_upscale_factor(const FaceSettings& settings, int32_t width, int32_t height);
// enhance always, or auto below 500 x 400.
bool face_enhance_wanted(const FaceSettings& settings, int32_t width, int32_t height);
// Whether a width x height photo is upscaled or enhanced at all under `settings`.
bool face_prepare_wanted(const FaceSettings& settings, int32_t width, int32_t height);

// auto (upscale or enhance, neither always): every photo is searched as it is first, and only the small ones in which
// that pass found no face are prepared and searched again. always: prepared before the only pass (the predecessor's
// order).
bool face_prepare_second_pass(const FaceSettings& settings);
// What a report says of the second pass: "; second pass (upscaled, enhanced) on N of M photos".
std::string face_second_pass_note(int64_t second_pass, int64_t photos);
// The first pass's settings: nothing upscaled or enhanced.
FaceSettings face_first_pass_settings(const FaceSettings& settings);

struct PreparedImages {
  std::vector<int32_t> factors;  // the upscale factor of each image
  std::vector<bool> enhanced;
  VarShapeBatch storage;   // the images that changed
  VarShapeBatch prepared;  // each image as the detector sees it: a view of storage or of the caller's image
};

// The upscale factor and enhancement of each image (out->factors, out->enhanced), and the index and prepared shape
// of each image that changes.
void face_prepare_plan(const VarShapeBatchView& images, const FaceSettings& settings, PreparedImages* out,
                       std::vector<int64_t>* changed, std::vector<ImageShape>* shapes);

// Upscales (bicubic) images[changed[k]] into storage[k] and enhances (contrast x1.15, sharpness x1.1, unsharp
// 1/120%/3) those `enhanced` says, in place, on `executor`'s placement; `images` and `storage` in one memory space
// (host, or a GPU backend's device memory). `report` receives the enhancement's when it ran.
Status face_prepare_run(const VarShapeBatchView& images, const std::vector<int64_t>& changed,
                        const std::vector<bool>& enhanced, const VarShapeBatchView& storage, OpExecutor& executor,
                        ExecReport* report);

// face_prepare_plan and face_prepare_run on host images, into out->storage; out->prepared views each image.
Status face_images_prepare(const VarShapeBatchView& images, const FaceSettings& settings, OpExecutor& executor,
                           PreparedImages* out, ExecReport* report = nullptr);

}  // namespace kiln
