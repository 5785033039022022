// `kiln bench faces`: the predecessor's face benchmark on real photographs, GPU against CPU, in its JSON shape:
// benchmark_results.<op>.<size>.gpu_true|gpu_false {mean_time_ms, mean_throughput, success_rate, ...} and
// analysis.performance_gains.<op>.<size> {time_improvement_percent, throughput_improvement_percent}. Needs the face
// application (KILN_HAS_FACES).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/status.h"

namespace kiln::bench {

struct FacesBenchSettings {
  std::vector<std::string> photos = {"/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
                                     "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"};
  std::vector<std::string> operations = {"face_detection", "image_enhancement", "thumbnail_creation",
                                         "quality_checks"};
  std::vector<std::string> sizes = {"small", "medium", "large"};  // names of kBenchSizes
  int64_t iterations = 10;  // timed runs per point, after one warm-up
  int64_t batch_size = 1;
  int32_t threads = 0;      // CPU threads (0: all cores)
  bool gpu = false;         // only on the GPU
  bool no_gpu = false;      // only on the CPU
};

// One line per operation, size and device as it is measured, newline included.
using ProgressLine = std::function<void(const std::string& line)>;

#if KILN_HAS_FACES
// The results; an error for a photo that cannot be read.
Result<nlohmann::json> faces_bench_run(const FacesBenchSettings& settings, const ProgressLine& progress);
#endif

}  // namespace kiln::bench
