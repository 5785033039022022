// A small line plot on a Canvas (`kiln segment --preview`'s latency and person share over time): a frame, the
// title, the y range's ends and middle and the x range's ends as labels, each series as a line (NaN: a gap).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pictures/canvas.h"

namespace kiln {

struct PlotSeries {
  std::string label;
  Rgb color;
  std::vector<double> x;
  std::vector<double> y;  // NaN: no value (the line breaks there)
};

// The plotted ranges and where they went: data (x, y) is drawn at (px(x), py(y)).
struct PlotFrame {
  int32_t left = 0, top = 0, width = 1, height = 1;  // the inner area, inside the frame line
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  int32_t px(double x) const;
  int32_t py(double y) const;
};

struct PlotSpec {
  std::string title;
  std::string x_unit;  // "s"
  std::string y_unit;  // "ms", "%"
  double y_min = 0;    // the y range starts here; it ends at the largest value (or y_max, where given)
  double y_max = 0;    // 0: the largest value
  double y_scale = 1;  // labels show y * y_scale (a share as %)
};

// Draws into x, y, width, height of `canvas`; returns the mapping.
PlotFrame line_plot_draw(Canvas& canvas, int32_t x, int32_t y, int32_t width, int32_t height, const PlotSpec& spec,
                         const std::vector<PlotSeries>& series);

}  // namespace kiln
