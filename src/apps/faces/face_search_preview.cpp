#include "apps/faces/face_search_preview.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <iterator>
#include <utility>

#include "apps/faces/face_crops.h"
#include "kiln/codec.h"

namespace kiln {

namespace {

constexpr SheetLayout kLayout{.columns = 1, .photo_width = 120, .photo_height = 120, .caption_lines = 2};

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The photos decoded last (a query's several faces, a hit's photo found again), at most kHeld at a time.
class PhotoCache {
 public:
  const ImageBuffer* get(const std::string& path) {
    auto found = std::find_if(m_photos.begin(), m_photos.end(), [&](const auto& held) { return held.first == path; });
    if (found == m_photos.end()) {
      if (m_photos.size() == kHeld) m_photos.pop_front();
      auto image = image_decode_file(path, DecodeOptions{.channels = 3});
      m_photos.emplace_back(path, image.is_ok() ? std::move(image).value() : ImageBuffer{});
      found = std::prev(m_photos.end());
    }
    return found->second.empty() ? nullptr : &found->second;
  }

 private:
  static constexpr size_t kHeld = 4;
  std::deque<std::pair<std::string, ImageBuffer>> m_photos;
};

FaceSearchPreviewCell face_draw(ContactSheet& sheet, int64_t cell, PhotoCache& photos, const std::string& image,
                                const float* box, int64_t row) {
  FaceSearchPreviewCell out;
  out.image = image;
  out.row = row;
  const ImageBuffer* photo = photos.get(image);
  if (photo == nullptr) {
    sheet.missing(cell, "unreadable");
    return out;
  }
  FaceDetection face;
  std::copy(box, box + 4, face.box);
  out.crop = face_margin_box(face, kFaceSearchPreviewMargin, photo->width, photo->height);
  if (out.crop.width <= 0 || out.crop.height <= 0) {
    sheet.missing(cell, "box outside the image");
    return out;
  }
  out.placement = sheet.picture(cell, photo->view().crop(out.crop.x, out.crop.y, out.crop.width, out.crop.height));
  out.drawn = true;
  return out;
}

}  // namespace

Result<std::vector<FaceSearchPreviewCell>> face_search_preview_write(const std::string& path,
                                                                     const std::vector<FaceSearchQuery>& queries,
                                                                     const FaceCollection& collection,
                                                                     int32_t hits_shown) {
  if (queries.empty()) return invalid_argument("faces search preview: no query face");
  SheetLayout layout = kLayout;
  layout.columns = 1 + hits_shown;
  ContactSheet sheet(static_cast<int64_t>(queries.size()) * layout.columns, layout,
                     "kiln faces search: each query face, then its nearest faces of " +
                         std::to_string(collection.count) + " (cosine)");
  PhotoCache photos;
  std::vector<FaceSearchPreviewCell> cells;
  for (size_t q = 0; q < queries.size(); ++q) {
    const FaceSearchQuery& query = queries[q];
    const int64_t first = static_cast<int64_t>(q) * layout.columns;
    cells.push_back(face_draw(sheet, first, photos, query.image, query.box, -1));
    sheet.caption(first, 0, "query: " + file_name(query.image), ink::kText, true);
    sheet.caption(first, 1, "face " + std::to_string(query.face), ink::kMuted);
    for (int32_t j = 0; j < hits_shown && j < static_cast<int32_t>(query.hits.size()); ++j) {
      const FaceHit& hit = query.hits[static_cast<size_t>(j)];
      if (hit.row < 0 || hit.row >= collection.count) break;
      const int64_t cell = first + 1 + j;
      const std::string& image = collection.paths[static_cast<size_t>(hit.row)];
      cells.push_back(face_draw(sheet, cell, photos, image, collection.boxes.data() + hit.row * 4, hit.row));
      char score[48];
      std::snprintf(score, sizeof(score), "%d: %.3f, row %lld", j + 1, hit.cosine, static_cast<long long>(hit.row));
      sheet.caption(cell, 0, score);
      sheet.caption(cell, 1, file_name(image), ink::kMuted, true);
    }
  }
  KILN_TRY(sheet.write(path));
  return cells;
}

}  // namespace kiln
