#include "pictures/line_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln {

namespace {

constexpr int32_t kLeftLabels = 46;  // room for the y labels
constexpr int32_t kTitle = 16;
constexpr int32_t kBottomLabels = 14;

std::string label(double value, const std::string& unit) {
  char text[48];
  const double magnitude = std::fabs(value);
  std::snprintf(text, sizeof(text), magnitude >= 100 || value == 0 ? "%.0f%s" : magnitude >= 10 ? "%.1f%s" : "%.2f%s",
                value, unit.c_str());
  return text;
}

}  // namespace

int32_t PlotFrame::px(double x) const {
  const double t = x_max > x_min ? (x - x_min) / (x_max - x_min) : 0;
  return left + static_cast<int32_t>(std::lround(t * (width - 1)));
}

int32_t PlotFrame::py(double y) const {
  const double t = y_max > y_min ? (y - y_min) / (y_max - y_min) : 0;
  return top + height - 1 - static_cast<int32_t>(std::lround(std::clamp(t, 0.0, 1.0) * (height - 1)));
}

PlotFrame line_plot_draw(Canvas& canvas, int32_t x, int32_t y, int32_t width, int32_t height, const PlotSpec& spec,
                         const std::vector<PlotSeries>& series) {
  PlotFrame f;
  f.left = x + kLeftLabels + 1;
  f.top = y + kTitle + 1;
  f.width = std::max(2, width - kLeftLabels - 2);
  f.height = std::max(2, height - kTitle - kBottomLabels - 2);
  f.x_min = std::numeric_limits<double>::infinity();
  f.x_max = -f.x_min;
  double largest = spec.y_min;
  for (const PlotSeries& s : series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      f.x_min = std::min(f.x_min, s.x[i]);
      f.x_max = std::max(f.x_max, s.x[i]);
      if (std::isfinite(s.y[i])) largest = std::max(largest, s.y[i]);
    }
  }
  if (!std::isfinite(f.x_min)) f.x_min = f.x_max = 0;
  f.y_min = spec.y_min;
  f.y_max = spec.y_max > spec.y_min ? spec.y_max : (largest > spec.y_min ? largest : spec.y_min + 1);

  canvas.text(f.left, y + 11, spec.title);
  canvas.rect(f.left - 1, f.top - 1, f.width + 2, f.height + 2, ink::kMuted);
  for (const double v : {f.y_min, (f.y_min + f.y_max) / 2, f.y_max}) {
    const std::string text = label(v * spec.y_scale, spec.y_unit);
    canvas.text(f.left - 4 - Canvas::text_width(text), f.py(v) + 4, text, ink::kMuted);
  }
  const std::string first = label(f.x_min, spec.x_unit);
  const std::string last = label(f.x_max, spec.x_unit);
  canvas.text(f.left, f.top + f.height + 13, first, ink::kMuted);
  canvas.text(f.left + f.width - Canvas::text_width(last), f.top + f.height + 13, last, ink::kMuted);
  for (const PlotSeries& s : series) {
    bool drawing = false;
    int32_t last_x = 0, last_y = 0;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.y[i])) {
        drawing = false;
        continue;
      }
      const int32_t px = f.px(s.x[i]);
      const int32_t py = f.py(s.y[i]);
      if (drawing) {
        canvas.line(last_x, last_y, px, py, s.color, 1, false);  // exact inks: a reader can find the line
      } else {
        canvas.dot(px, py, 1, s.color);
      }
      drawing = true;
      last_x = px;
      last_y = py;
    }
  }
  return f;
}

}  // namespace kiln
