// The renderers of render_peers: the dataset of windows they all draw and one renderer per tool (kiln's CPU
// renderer at a given ISA, OpenCV, Cairo), each turning windows into gray u8 images in a reused ring.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/cpu_isa.h"

namespace kiln::bench {

constexpr int64_t kWindowCount = 1000;
constexpr int32_t kSeqLen = 100;
constexpr int kRing = 4;  // images rendered per call and kept as a reused output buffer

struct Config {
  int32_t width;
  int32_t height;
  float line_width;
};

// A seeded random walk (splitmix64 + Box-Muller) and the sliding windows over it: window i is walk[i, i + kSeqLen).
struct Dataset {
  std::vector<float> walk;
  std::vector<int64_t> starts;

  const float* window(int64_t i) const { return walk.data() + starts[static_cast<size_t>(i)]; }
};

Dataset dataset_make(uint64_t seed);

// Pixel coordinates of a window's points, the same geometry kiln uses (render_px.h): x_i = i (W-1)/(n-1),
// y = (1 - norm) (H-1), pixel centres at integer coordinates, a flat window on the middle row.
template <typename Emit>
void window_points(const float* v, int32_t n, int32_t width, int32_t height, Emit&& emit) {
  const auto [lo, hi] = std::minmax_element(v, v + n);
  const float vmin = *lo;
  const float span = *hi - vmin;
  const float x_step = static_cast<float>(width - 1) / static_cast<float>(n - 1);
  const float h1 = static_cast<float>(height - 1);
  for (int32_t i = 0; i < n; ++i) {
    const float y = span > 0.0f ? (1.0f - (v[i] - vmin) / span) * h1 : 0.5f * h1;
    emit(static_cast<float>(i) * x_step, y);
  }
}

// Renders kRing consecutive windows per call into a reused ring of gray images.
class Renderer {
 public:
  virtual ~Renderer() = default;
  virtual void prepare() {}
  virtual void finish() {}
  // Windows [first, first + kRing); image slot i holds window first + i afterwards.
  virtual void render(int64_t first) = 0;
  virtual const uint8_t* image(int slot) const = 0;
  virtual int64_t row_stride() const = 0;
};

std::unique_ptr<Renderer> renderer_kiln(const Dataset& data, const Config& config, CpuIsa isa);
std::unique_ptr<Renderer> renderer_opencv(const Dataset& data, const Config& config);
std::unique_ptr<Renderer> renderer_cairo(const Dataset& data, const Config& config);

}  // namespace kiln::bench
