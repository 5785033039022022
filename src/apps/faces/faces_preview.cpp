#include "apps/faces/faces_preview.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/thread_pool.h"

namespace kiln {

namespace {

constexpr int32_t kListedFaces = 4;  // verdict lines under a photo; more faces get one "and N more" line
constexpr int64_t kDecodedAtOnce = 8;  // photos held decoded at a time (a sheet may show up to 1,000 big photos)

void face_draw(Canvas& canvas, const SheetPlacement& at, const nlohmann::json& record, int32_t number, Rgb color) {
  const auto& b = record.at("bbox");  // x0, y0, x1, y1
  const int32_t x0 = at.canvas_x(b[0].get<double>());
  const int32_t y0 = at.canvas_y(b[1].get<double>());
  const int32_t x1 = at.canvas_x(b[2].get<double>());
  const int32_t y1 = at.canvas_y(b[3].get<double>());
  canvas.rect(x0, y0, std::max(1, x1 - x0), std::max(1, y1 - y0), color, 2);
  for (const auto& mark : record.value("landmarks", nlohmann::json::array())) {
    canvas.dot(at.canvas_x(mark[0].get<double>()), at.canvas_y(mark[1].get<double>()), 2, ink::kMark);
  }
  const std::string label = std::to_string(number);
  const int32_t label_top = y0 - 14 >= at.y ? y0 - 14 : y0;  // above the box, or inside it at the photo's top
  canvas.fill(x0, label_top, Canvas::text_width(label) + 6, 14, color);
  canvas.text(x0 + 3, label_top + 11, label, ink::kBackground);
}

}  // namespace

std::string face_verdict(const nlohmann::json& record, int32_t number, Rgb* color) {
  const std::string prefix = std::to_string(number) + ": ";
  if (record.contains("duplicate_of")) {
    *color = ink::kRepeat;
    char cosine[32];
    std::snprintf(cosine, sizeof(cosine), "%.2f", record.value("duplicate_cosine", 0.0));
    return prefix + "duplicate of row " + std::to_string(record["duplicate_of"].get<int64_t>()) + " (cosine " +
           cosine + ")";
  }
  const std::string row = "row " + std::to_string(record.value("row", int64_t{-1}));
  if (record.value("accepted", false)) {
    *color = ink::kGood;
    return prefix + row + ", kept";
  }
  *color = ink::kBad;
  std::string reasons;
  for (const auto& reason : record.value("reasons", nlohmann::json::array())) {
    reasons += (reasons.empty() ? "" : ", ") + reason.get<std::string>();
  }
  return prefix + row + ", rejected: " + (reasons.empty() ? "below the thresholds" : reasons);
}

Result<std::vector<FacesPreviewCell>> faces_preview_write(const std::string& path,
                                                          const std::vector<nlohmann::json>& records,
                                                          const ImageBatches& batches, int64_t count,
                                                          const DecodeOptions& decode) {
  count = std::min(count, batches.count());
  if (count <= 0) return invalid_argument("faces preview: no images");
  std::map<int64_t, std::vector<const nlohmann::json*>> by_image;
  for (const nlohmann::json& record : records) {
    if (!record.contains("error")) by_image[record.at("image_index").get<int64_t>()].push_back(&record);
  }

  int64_t most_faces = 1;  // an unreadable image's cell has two lines
  for (const auto& [index, faces] : by_image) {
    if (index < batches.offset() + count) most_faces = std::max<int64_t>(most_faces, static_cast<int64_t>(faces.size()));
  }
  const int32_t lines = 1 + static_cast<int32_t>(std::min<int64_t>(most_faces, kListedFaces + 1));
  ContactSheet sheet(count, SheetLayout{.caption_lines = lines},
                     "kiln faces: the first " + std::to_string(count) + " of " + std::to_string(batches.count()) +
                         " images",
                     {{"kept", ink::kGood}, {"rejected", ink::kBad}, {"duplicate", ink::kRepeat},
                      {"landmarks", ink::kMark}});
  std::vector<FacesPreviewCell> cells;
  ThreadPool pool(0);
  DecodedBatch decoded;
  for (int64_t i = 0; i < count; ++i) {
    if (i % kDecodedAtOnce == 0) decoded = batches.take(i, std::min(kDecodedAtOnce, count - i), decode, &pool);
    const size_t at = static_cast<size_t>(i % kDecodedAtOnce);
    FacesPreviewCell cell;
    cell.image_index = batches.offset() + i;
    const std::string name = std::filesystem::path(batches.name(i)).filename().string();
    const int64_t k = decoded.index[at];
    cell.readable = k >= 0;
    if (!cell.readable) {
      sheet.missing(i, "unreadable");
      sheet.caption(i, 0, name, ink::kBad, true);
      std::string why = decoded.status[at].message();
      if (why.rfind(batches.name(i) + ": ", 0) == 0) why.erase(0, batches.name(i).size() + 2);  // the name is above
      sheet.caption(i, 1, why, ink::kBad);
      cells.push_back(cell);
      continue;
    }
    cell.placement = sheet.picture(i, decoded.images[k]);
    const auto found = by_image.find(cell.image_index);
    const std::vector<const nlohmann::json*> faces =
        found == by_image.end() ? std::vector<const nlohmann::json*>{} : found->second;
    sheet.caption(i, 0, name + ": " + std::to_string(faces.size()) + (faces.size() == 1 ? " face" : " faces"),
                  ink::kText, true);
    for (size_t f = 0; f < faces.size(); ++f) {
      Rgb color;
      const std::string verdict = face_verdict(*faces[f], static_cast<int32_t>(f + 1), &color);
      face_draw(sheet.canvas(), cell.placement, *faces[f], static_cast<int32_t>(f + 1), color);
      if (f < kListedFaces) sheet.caption(i, static_cast<int32_t>(f + 1), verdict, color);
    }
    if (faces.size() > kListedFaces) {
      sheet.caption(i, kListedFaces + 1, "and " + std::to_string(faces.size() - kListedFaces) + " more faces",
                    ink::kMuted);
    }
    cells.push_back(cell);
  }
  KILN_TRY(sheet.write(path));
  return cells;
}

}  // namespace kiln
