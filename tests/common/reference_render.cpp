#include "common/reference_render.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace kiln::test {

namespace {

struct Point {
  double x, y;
};

double segment_distance(Point p, Point a, Point b) {
  const double dx = b.x - a.x;
  const double dy = b.y - a.y;
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0.0;
  t = std::clamp(t, 0.0, 1.0);
  return std::hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

}  // namespace

std::vector<double> reference_line_coverage(const std::vector<float>& window, int32_t width, int32_t height,
                                            double line_width, int32_t samples) {
  const auto n = static_cast<int32_t>(window.size());
  const auto [lo_it, hi_it] = std::minmax_element(window.begin(), window.end());
  const double lo = *lo_it;
  const double hi = *hi_it;
  std::vector<Point> points(n);
  for (int32_t i = 0; i < n; ++i) {
    const double norm = hi > lo ? (window[i] - lo) / (hi - lo) : 0.5;
    points[i] = {n > 1 ? i * static_cast<double>(width - 1) / (n - 1) : 0.0, (1.0 - norm) * (height - 1)};
  }
  const double r = line_width / 2;
  std::vector<double> coverage(static_cast<size_t>(width) * height, 0.0);
  for (int32_t y = 0; y < height; ++y) {
    for (int32_t x = 0; x < width; ++x) {
      const Point centre{static_cast<double>(x), static_cast<double>(y)};
      std::vector<int32_t> near;
      double nearest = 1e30;
      for (int32_t k = 0; k + 1 < n; ++k) {
        const double d = segment_distance(centre, points[k], points[k + 1]);
        nearest = std::min(nearest, d);
        if (d < r + 0.75) near.push_back(k);
      }
      if (nearest >= r + 0.75) continue;
      int32_t inside = 0;
      for (int32_t sy = 0; sy < samples; ++sy) {
        for (int32_t sx = 0; sx < samples; ++sx) {
          const Point p{x - 0.5 + (sx + 0.5) / samples, y - 0.5 + (sy + 0.5) / samples};
          for (int32_t k : near) {
            if (segment_distance(p, points[k], points[k + 1]) <= r) {
              ++inside;
              break;
            }
          }
        }
      }
      coverage[static_cast<size_t>(y) * width + x] = static_cast<double>(inside) / (samples * samples);
    }
  }
  return coverage;
}

uint8_t reference_level(double coverage, uint8_t background, uint8_t ink) {
  return static_cast<uint8_t>(std::lround(background + (ink - background) * coverage));
}

std::vector<float> random_walk(int64_t n, uint64_t seed, float step) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-step, step);
  std::vector<float> values(static_cast<size_t>(n));
  float v = 100.0f;
  for (auto& value : values) {
    v += uniform(rng);
    value = v;
  }
  return values;
}

}  // namespace kiln::test
