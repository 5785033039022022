// A grid of pictures with caption lines under each and a title with a colour legend above: the layout the image
// previews share (`kiln faces --preview`, `kiln faces search --preview`, `kiln quality --preview`).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pictures/canvas.h"

namespace kiln {

struct SheetLayout {
  int32_t columns = 4;
  int32_t photo_width = 280;   // each picture is scaled to fit this box (never up), its top-left at the box's
  int32_t photo_height = 210;
  int32_t caption_lines = 3;
};

// Where a picture's pixels went: picture pixel (px, py) is drawn at (x + px * scale, y + py * scale).
struct SheetPlacement {
  int32_t x = 0;
  int32_t y = 0;
  double scale = 1;
  int32_t canvas_x(double px) const;
  int32_t canvas_y(double py) const;
};

class ContactSheet {
 public:
  static constexpr int32_t kHeader = 30;
  static constexpr int32_t kGap = 10;
  static constexpr int32_t kLine = 14;

  ContactSheet(int64_t cells, const SheetLayout& layout, const std::string& title,
               const std::vector<std::pair<std::string, Rgb>>& legend = {});

  Canvas& canvas() { return m_canvas; }
  // Draws `image` (RGB, or BGR where bgr) into cell `cell`'s picture box.
  SheetPlacement picture(int64_t cell, const ImageView& image, bool bgr = false);
  // A grey picture box with `why` in it (an input that could not be read).
  void missing(int64_t cell, const std::string& why);
  // Caption line `line` (0 = first) under the picture, shortened to the cell's width (at its start where keep_end).
  void caption(int64_t cell, int32_t line, const std::string& text, Rgb color = ink::kText, bool keep_end = false);
  Status write(const std::string& path) const { return m_canvas.write_png(path); }

 private:
  int32_t cell_x(int64_t cell) const;
  int32_t cell_y(int64_t cell) const;

  SheetLayout m_layout;
  Canvas m_canvas;
};

}  // namespace kiln
