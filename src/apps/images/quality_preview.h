// kiln quality --preview: images ranked by their overall score, best first, each with its four metrics and verdict.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/images/image_batches.h"
#include "pictures/contact_sheet.h"

namespace kiln {

// One measured input (about 32 bytes: the job keeps one per image while a preview is asked for).
struct QualityPreviewEntry {
  int64_t index = 0;  // the input's place in the job
  float blur = 0;
  float brightness = 0;
  float contrast = 0;
  float sharpness = 0;
  float score = 0;
  bool pass = false;
};

struct QualityPreviewCell {
  QualityPreviewEntry entry;
  int64_t rank = 0;  // 0 = the best score
  SheetPlacement placement;
};

// The `count` entries at evenly spaced ranks of the ranking by score (all of them when there are no more; the best and
// the worst always), best first; ties keep input order.
std::vector<QualityPreviewCell> quality_preview_pick(std::vector<QualityPreviewEntry> entries, int64_t count);

// Draws the picked images (decoded again from `batches`; `bgr`: in-memory images are BGR) with their rank, score,
// verdict and metrics.
Result<std::vector<QualityPreviewCell>> quality_preview_write(const std::string& path,
                                                              std::vector<QualityPreviewEntry> entries,
                                                              const ImageBatches& batches, int64_t count,
                                                              const DecodeOptions& decode, bool bgr = false);

}  // namespace kiln
