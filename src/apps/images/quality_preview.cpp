#include "apps/images/quality_preview.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/thread_pool.h"

namespace kiln {

namespace {

std::string number(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

}  // namespace

std::vector<QualityPreviewCell> quality_preview_pick(std::vector<QualityPreviewEntry> entries, int64_t count) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const QualityPreviewEntry& a, const QualityPreviewEntry& b) { return a.score > b.score; });
  const int64_t n = static_cast<int64_t>(entries.size());
  count = std::min(count, n);
  std::vector<QualityPreviewCell> cells;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t rank = count == 1 ? 0 : i * (n - 1) / (count - 1);
    cells.push_back({entries[static_cast<size_t>(rank)], rank, {}});
  }
  return cells;
}

Result<std::vector<QualityPreviewCell>> quality_preview_write(const std::string& path,
                                                              std::vector<QualityPreviewEntry> entries,
                                                              const ImageBatches& batches, int64_t count,
                                                              const DecodeOptions& decode, bool bgr) {
  const int64_t measured = static_cast<int64_t>(entries.size());
  std::vector<QualityPreviewCell> cells = quality_preview_pick(std::move(entries), count);
  if (cells.empty()) return invalid_argument("quality preview: no image could be measured");
  const std::string title = measured == static_cast<int64_t>(cells.size())
                                ? "kiln quality: " + std::to_string(measured) + " images by overall score"
                                : "kiln quality: " + std::to_string(cells.size()) + " of " + std::to_string(measured) +
                                      " images, evenly spaced by overall score";
  ContactSheet sheet(static_cast<int64_t>(cells.size()), SheetLayout{.caption_lines = 4}, title,
                     {{"passed", ink::kGood}, {"failed", ink::kBad}});
  ThreadPool pool(0);
  for (size_t i = 0; i < cells.size(); ++i) {
    QualityPreviewCell& cell = cells[i];
    const QualityPreviewEntry& e = cell.entry;
    const int64_t cell_index = static_cast<int64_t>(i);
    const DecodedBatch decoded = batches.take(e.index, 1, decode, &pool);
    const std::string name = std::filesystem::path(batches.name(e.index)).filename().string();
    if (decoded.images.count() == 1) {
      cell.placement = sheet.picture(cell_index, decoded.images[0], bgr && !batches.from_files());
    } else {
      sheet.missing(cell_index, "no longer readable");
    }
    std::string title = "#";  // appended: "#" + string&& trips GCC 12's false -Wrestrict warning
    title += std::to_string(cell.rank + 1);
    title += "  ";
    title += name;
    sheet.caption(cell_index, 0, title, ink::kText, true);
    sheet.caption(cell_index, 1, "score " + number(e.score, 3) + (e.pass ? ", passed" : ", failed"),
                  e.pass ? ink::kGood : ink::kBad);
    sheet.caption(cell_index, 2, "blur " + number(e.blur, 1) + "   sharpness " + number(e.sharpness, 1));
    sheet.caption(cell_index, 3, "brightness " + number(e.brightness, 1) + "   contrast " + number(e.contrast, 1));
  }
  KILN_TRY(sheet.write(path));
  return cells;
}

}  // namespace kiln
