// kiln faces search --preview: one row per query face, the face (with a margin) first and then its nearest faces of
// the collection, cut from their own photos, each with its cosine and row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/apps/face_search.h"
#include "kiln/ops/resize.h"
#include "pictures/contact_sheet.h"

namespace kiln {

inline constexpr double kFaceSearchPreviewMargin = 0.2;  // of the box's width and height, on each side

struct FaceSearchQuery {
  std::string image;
  int32_t face = 0;           // which face of the image
  float box[4] = {0, 0, 0, 0};  // x, y, w, h
  std::vector<FaceHit> hits;  // best first
};

struct FaceSearchPreviewCell {
  std::string image;
  int64_t row = -1;  // the hit's row in the collection; -1 for the query
  RectI crop;        // the part of the image drawn
  SheetPlacement placement;  // where the crop's pixels went (crop pixel (0, 0) at placement.x, placement.y)
  bool drawn = false;        // false: the image could not be read again
};

// Cells in order: each query, then its first `hits_shown` hits (fewer when it has fewer).
Result<std::vector<FaceSearchPreviewCell>> face_search_preview_write(const std::string& path,
                                                                     const std::vector<FaceSearchQuery>& queries,
                                                                     const FaceCollection& collection,
                                                                     int32_t hits_shown);

}  // namespace kiln
