// Each GPU command started as a new process, as users start it: that process's first ONNX Runtime session is on the
// CUDA provider. The in-process tests could not see a defect that broke every such command (the provider's library
// was loaded before ONNX Runtime's environment existed, so its first log line failed): an earlier test had always
// made the environment. Each GPU run's output is compared with the same command's on the CPU. Without a CUDA device
// and ONNX Runtime's CUDA provider these tests skip visibly; under KILN_REQUIRE_GPU=1 they fail.
#include <gtest/gtest.h>

#include <hdf5.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "common/cuda_provider.h"
#include "common/gpu_required.h"
#include "common/photo_video.h"
#include "common/test_util.h"

namespace kiln {
namespace {

const std::string kPhotos =
    "/usr/lib/python3/dist-packages/skimage/data/astronaut.png "           // python3-skimage
    "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg "         // python3-matplotlib
    "/usr/lib/python3/dist-packages/skimage/data/coffee.png";              // no face

// In the test's body: a skip returns from the function it is written in.
#define KILN_CUDA_PROVIDER_REQUIRE()                                                        \
  if (!test::cuda_provider_available()) {                                                   \
    KILN_GPU_SKIP("no CUDA device with ONNX Runtime's CUDA provider: the GPU commands need one"); \
  }

// Runs `kiln args`; a failed EXPECT with the output when it does not exit 0.
std::string kiln_ok(const std::string& args) {
  const test::CommandResult r = test::run_kiln(args);
  EXPECT_EQ(r.exit_code, 0) << "kiln " << args << "\n" << r.output;
  return r.output;
}

// The float32 rows of an .npy file written by kiln infer (the header's length is in bytes 8-9).
std::vector<float> npy_floats(const std::string& path) {
  const std::vector<uint8_t> bytes = test::read_file_bytes(path);
  if (bytes.size() < 10) return {};
  const size_t header = 10 + static_cast<size_t>(bytes[8] | (bytes[9] << 8));
  std::vector<float> out((bytes.size() - header) / sizeof(float));
  std::memcpy(out.data(), bytes.data() + header, out.size() * sizeof(float));
  return out;
}

std::vector<float> h5_floats(const std::string& path, const char* dataset) {
  std::vector<float> out;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return out;
  const hid_t set = H5Dopen2(file, dataset, H5P_DEFAULT);
  if (set >= 0) {
    const hid_t space = H5Dget_space(set);
    out.resize(static_cast<size_t>(H5Sget_simple_extent_npoints(space)));
    if (H5Dread(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) out.clear();
    H5Sclose(space);
    H5Dclose(set);
  }
  H5Fclose(file);
  return out;
}

// Rows of `width` values: the GPU's within cosine 0.999 of the CPU's (the CUDA provider convolves in TF32).
void expect_rows_aligned(const std::vector<float>& gpu, const std::vector<float>& cpu, size_t width) {
  ASSERT_EQ(gpu.size(), cpu.size());
  ASSERT_GT(cpu.size(), 0u);
  for (size_t row = 0; row < cpu.size() / width; ++row) {
    double dot = 0, a2 = 0, b2 = 0;
    for (size_t i = row * width; i < (row + 1) * width; ++i) {
      dot += static_cast<double>(gpu[i]) * cpu[i];
      a2 += static_cast<double>(gpu[i]) * gpu[i];
      b2 += static_cast<double>(cpu[i]) * cpu[i];
    }
    EXPECT_GE(dot / std::sqrt(a2 * b2 + 1e-30), 0.999) << "row " << row;
  }
}

// The first line of `text` that starts with `prefix`.
std::string line_of(const std::string& text, const std::string& prefix) {
  const size_t at = text.find("\n" + prefix);
  if (at == std::string::npos) return text.rfind(prefix, 0) == 0 ? text.substr(0, text.find('\n')) : "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(GpuCommands, KilnInferInANewProcessRunsOnCudaWithTheCpusRows) {
  KILN_CUDA_PROVIDER_REQUIRE();
  const test::TempDir dir;
  const std::string gpu = kiln_ok("infer --model fr-embed " + kPhotos + " -o " + dir.file("gpu.npy") + " --mode gpu");
  EXPECT_NE(gpu.find("Provider: cuda"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("model input: device"), std::string::npos) << gpu;
  kiln_ok("infer --model fr-embed " + kPhotos + " -o " + dir.file("cpu.npy") + " --mode cpu");
  expect_rows_aligned(npy_floats(dir.file("gpu.npy")), npy_floats(dir.file("cpu.npy")), 512);
}

TEST(GpuCommands, KilnFacesInANewProcessFindsTheCpusFacesOnCuda) {
  KILN_CUDA_PROVIDER_REQUIRE();
  const test::TempDir dir;
  const std::string gpu = kiln_ok("faces " + kPhotos + " -o " + dir.file("gpu.h5") + " --mode gpu -q");
  EXPECT_EQ(line_of(gpu, "Detection:").rfind("Detection: cuda", 0), 0u) << gpu;
  EXPECT_EQ(line_of(gpu, "Embedding:").rfind("Embedding: cuda", 0), 0u) << gpu;
  const std::string cpu = kiln_ok("faces " + kPhotos + " -o " + dir.file("cpu.h5") + " --mode cpu -q");
  EXPECT_EQ(line_of(gpu, "Faces:"), line_of(cpu, "Faces:"));
  expect_rows_aligned(h5_floats(dir.file("gpu.h5"), "embeddings"), h5_floats(dir.file("cpu.h5"), "embeddings"), 512);
  const std::vector<float> a = h5_floats(dir.file("gpu.h5"), "landmarks");
  const std::vector<float> b = h5_floats(dir.file("cpu.h5"), "landmarks");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 2.0f) << "landmark coordinate " << i;
}

// GPU_MEMORY_LIMIT_GB is the process's: the detector and the embedder share one arena of the models' three quarters.
TEST(GpuCommands, KilnFacesUnderAMemoryLimitSharesOneArenaAndFindsTheSameFaces) {
  KILN_CUDA_PROVIDER_REQUIRE();
  const test::TempDir dir;
  ::setenv("GPU_MEMORY_LIMIT_GB", "2", 1);
  const std::string gpu = kiln_ok("faces " + kPhotos + " -o " + dir.file("gpu.h5") + " --mode gpu -q");
  ::unsetenv("GPU_MEMORY_LIMIT_GB");
  for (const char* stage : {"Detection:", "Embedding:"}) {
    EXPECT_NE(line_of(gpu, stage).find("the models share one 1.50 GiB CUDA arena"), std::string::npos) << gpu;
  }
  const std::string cpu = kiln_ok("faces " + kPhotos + " -o " + dir.file("cpu.h5") + " --mode cpu -q");
  EXPECT_EQ(line_of(gpu, "Faces:"), line_of(cpu, "Faces:"));
}

TEST(GpuCommands, KilnSegmentInANewProcessMakesTheCpusMasksOnCuda) {
  KILN_CUDA_PROVIDER_REQUIRE();
  const test::TempDir dir;
  test::photo_video_write(test::kAstronautPhoto, dir.file("person.mp4"));
  kiln_ok("segment " + dir.file("person.mp4") + " -o " + dir.file("cpu.mkv") +
          " --mode cpu --hw-decode none --codec ffv1 -q");
  for (const char* pipeline : {"--throughput", "--latency"}) {
    const std::string gpu = kiln_ok("segment " + dir.file("person.mp4") + " -o " + dir.file("gpu.mkv") +
                                    " --mode gpu --codec ffv1 -q " + pipeline + " --reference " + dir.file("cpu.mkv"));
    EXPECT_EQ(line_of(gpu, "Inference:").rfind("Inference: cuda", 0), 0u) << gpu;
    std::smatch m;
    const std::string iou = line_of(gpu, "IoU against the reference:");
    ASSERT_TRUE(std::regex_search(iou, m, std::regex("([0-9.]+)$"))) << gpu;
    EXPECT_GE(std::stod(m[1]), 0.97) << pipeline;
  }
}

}  // namespace
}  // namespace kiln
