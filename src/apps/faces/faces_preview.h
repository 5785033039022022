// kiln faces --preview: the job's first images as a contact sheet, each face's box and landmarks drawn on its photo
// in the colour of its verdict (kept, rejected, duplicate) and the verdict written under the photo.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/images/image_batches.h"
#include "pictures/contact_sheet.h"

namespace kiln {

struct FacesPreviewCell {
  int64_t image_index = 0;
  bool readable = false;
  SheetPlacement placement;  // where the photo's pixels went
};

// records: the job's JSON lines (one per face and per unreadable image) of the images drawn; images [0, count) of
// `batches` are decoded again (RGB) and drawn in input order.
Result<std::vector<FacesPreviewCell>> faces_preview_write(const std::string& path,
                                                          const std::vector<nlohmann::json>& records,
                                                          const ImageBatches& batches, int64_t count,
                                                          const DecodeOptions& decode);

// The line under a face's photo, e.g. "2: row 7, rejected: blur 85.2 < 120", and its ink.
std::string face_verdict(const nlohmann::json& record, int32_t number, Rgb* ink);

}  // namespace kiln
