#include "pictures/contact_sheet.h"

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

int32_t cell_height(const SheetLayout& layout) {
  return layout.photo_height + 4 + layout.caption_lines * ContactSheet::kLine + ContactSheet::kGap;
}

int32_t sheet_width(int64_t cells, const SheetLayout& layout) {
  const int64_t columns = std::clamp<int64_t>(cells, 1, layout.columns);
  return static_cast<int32_t>(columns * (layout.photo_width + ContactSheet::kGap) + ContactSheet::kGap);
}

int32_t sheet_height(int64_t cells, const SheetLayout& layout) {
  const int64_t rows = std::max<int64_t>(1, (cells + layout.columns - 1) / layout.columns);
  return static_cast<int32_t>(ContactSheet::kHeader + rows * cell_height(layout));
}

}  // namespace

int32_t SheetPlacement::canvas_x(double px) const { return x + static_cast<int32_t>(std::lround(px * scale)); }
int32_t SheetPlacement::canvas_y(double py) const { return y + static_cast<int32_t>(std::lround(py * scale)); }

ContactSheet::ContactSheet(int64_t cells, const SheetLayout& layout, const std::string& title,
                           const std::vector<std::pair<std::string, Rgb>>& legend)
    : m_layout(layout), m_canvas(sheet_width(cells, layout), sheet_height(cells, layout)) {
  m_canvas.text(kGap, 19, title, ink::kText, 1.2);
  int32_t x = std::max(kGap + Canvas::text_width(title, 1.2) + 24, m_canvas.width() / 2);
  for (const auto& [label, color] : legend) {
    m_canvas.fill(x, 10, 12, 12, color);
    m_canvas.text(x + 16, 20, label, ink::kText);
    x += 16 + Canvas::text_width(label) + 18;
  }
}

int32_t ContactSheet::cell_x(int64_t cell) const {
  return kGap + static_cast<int32_t>(cell % m_layout.columns) * (m_layout.photo_width + kGap);
}

int32_t ContactSheet::cell_y(int64_t cell) const {
  return kHeader + static_cast<int32_t>(cell / m_layout.columns) * cell_height(m_layout);
}

SheetPlacement ContactSheet::picture(int64_t cell, const ImageView& image, bool bgr) {
  SheetPlacement placement{cell_x(cell), cell_y(cell), 1};
  if (image.width <= 0 || image.height <= 0) return placement;
  placement.scale = std::min({1.0, static_cast<double>(m_layout.photo_width) / image.width,
                              static_cast<double>(m_layout.photo_height) / image.height});
  const int32_t w = std::max(1, static_cast<int32_t>(std::lround(image.width * placement.scale)));
  const int32_t h = std::max(1, static_cast<int32_t>(std::lround(image.height * placement.scale)));
  m_canvas.image(image, placement.x, placement.y, w, h, bgr);
  return placement;
}

void ContactSheet::missing(int64_t cell, const std::string& why) {
  const int32_t x = cell_x(cell);
  const int32_t y = cell_y(cell);
  m_canvas.fill(x, y, m_layout.photo_width, m_layout.photo_height, ink::kEmpty);
  m_canvas.text(x + 8, y + m_layout.photo_height / 2, Canvas::text_fitted(why, m_layout.photo_width - 16), ink::kBad);
}

void ContactSheet::caption(int64_t cell, int32_t line, const std::string& text, Rgb color, bool keep_end) {
  if (line < 0 || line >= m_layout.caption_lines) return;
  const int32_t y = cell_y(cell) + m_layout.photo_height + 4 + (line + 1) * kLine - 3;
  m_canvas.text(cell_x(cell), y, Canvas::text_fitted(text, m_layout.photo_width, 1, keep_end), color);
}

}  // namespace kiln
