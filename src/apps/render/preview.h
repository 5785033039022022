// Contact sheet of rendered images for `kiln render --preview grid.png`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

constexpr int32_t kPreviewGutter = 2;      // pixels between tiles
constexpr uint8_t kPreviewGutterGray = 128;
constexpr uint8_t kPreviewCaptionGray = 236;  // behind each image's caption

// Which `count` of `total` images a preview shows: evenly spaced from the first (0) to the last (total - 1), in
// order; all of them when there are no more than `count`. A stride-1 dataset's neighbours are near copies of each
// other, so its first images would show one chart many times.
std::vector<int64_t> preview_sample(int64_t total, int64_t count);

// Tiles gray or RGB images (all alike; u8, or f32 in [0, 1] scaled by 255 and clamped) row-major into `columns`
// columns (<= 0: a near-square grid) with a 2-px mid-gray gutter, and writes one PNG to `path` (tmp + rename): gray
// (RGB for RGB images), or with `captions` (one per image) RGB with each caption in a light gray strip under its image
// (kiln's preview text).
// Cells are as large as the largest image; smaller images sit top-left on the gutter gray.
// UnsupportedFormat when kiln was built without libspng.
Status preview_write_png(const std::string& path, const std::vector<ImageView>& images, int32_t columns,
                         const std::vector<std::string>& captions = {});

}  // namespace kiln
