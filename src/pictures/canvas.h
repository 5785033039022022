// An RGB picture to draw results on (`--preview` contact sheets and plots): photos scaled in, boxes, dots, lines,
// mask overlays and text (OpenCV's Hershey font, so no font files are needed), written as PNG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

struct Rgb {
  uint8_t r = 0;
  uint8_t g = 0;
  uint8_t b = 0;
  bool operator==(const Rgb&) const = default;
};

// The inks every preview uses, so that a colour means the same thing in each picture.
namespace ink {
inline constexpr Rgb kBackground{255, 255, 255};
inline constexpr Rgb kText{20, 20, 20};
inline constexpr Rgb kMuted{110, 110, 110};
inline constexpr Rgb kGood{30, 170, 60};      // kept, accepted
inline constexpr Rgb kBad{215, 40, 40};       // rejected
inline constexpr Rgb kRepeat{240, 150, 0};    // a duplicate
inline constexpr Rgb kMark{0, 190, 230};      // landmarks
inline constexpr Rgb kEmpty{225, 225, 225};   // no picture (an unreadable input)
inline constexpr Rgb kOverlay{255, 0, 200};   // masks
inline constexpr Rgb kSeries[] = {{31, 119, 180}, {214, 39, 40}, {44, 160, 44}, {148, 103, 189}};
}  // namespace ink

class Canvas {
 public:
  Canvas(int32_t width, int32_t height, Rgb background = ink::kBackground);

  int32_t width() const { return m_width; }
  int32_t height() const { return m_height; }
  ImageView view() const;
  Rgb pixel(int32_t x, int32_t y) const;

  void fill(int32_t x, int32_t y, int32_t w, int32_t h, Rgb color);
  // Draws a u8 HWC image (gray, RGB or RGBA; alpha ignored) scaled to w x h (area-averaged when shrinking) with its
  // top-left corner at x, y; `bgr`: its three or four channels are B, G, R (A).
  void image(const ImageView& image, int32_t x, int32_t y, int32_t w, int32_t h, bool bgr = false);
  // A rectangle's outline, `thickness` pixels inside x, y, w, h.
  void rect(int32_t x, int32_t y, int32_t w, int32_t h, Rgb color, int32_t thickness = 1);
  void dot(int32_t x, int32_t y, int32_t radius, Rgb color);
  // Anti-aliased where `smooth`; otherwise every pixel on it is `color` exactly.
  void line(int32_t x0, int32_t y0, int32_t x1, int32_t y1, Rgb color, int32_t thickness = 1, bool smooth = true);
  // `values` (w x h, 0-1) blended over x, y, w, h: the pixel moves towards `color` by value * opacity.
  void overlay(const float* values, int32_t x, int32_t y, int32_t w, int32_t h, Rgb color, float opacity);
  // Text with its left end at x and its baseline at y; `size` 1 is about 9 pixels from baseline to cap.
  void text(int32_t x, int32_t y, const std::string& text, Rgb color = ink::kText, double size = 1);
  static int32_t text_width(const std::string& text, double size = 1);
  // `text` shortened with "..." to fit `width` pixels: its end dropped, or its start where keep_end (file paths).
  static std::string text_fitted(const std::string& text, int32_t width, double size = 1, bool keep_end = false);

  Status write_png(const std::string& path) const;

 private:
  int32_t m_width;
  int32_t m_height;
  std::vector<uint8_t> m_pixels;
};

}  // namespace kiln
