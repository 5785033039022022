// The image sizes of the predecessor's benchmark_gpu.py, which `kiln bench ops` and `kiln bench faces` run at.
#pragma once

#include <array>
#include <cstdint>

namespace kiln::bench {

struct BenchSize {
  const char* name;
  int32_t width;
  int32_t height;
};
constexpr std::array<BenchSize, 3> kBenchSizes = {{{"small", 300, 300}, {"medium", 800, 600}, {"large", 1920, 1080}}};

}  // namespace kiln::bench
