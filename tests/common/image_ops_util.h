// Shared by the image-op tests: random var-shape batches, OpenCV views of kiln images, image differences, CPU-only
// exec options, and the GPU backends a parity test runs on.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/device.h"
#include "kiln/exec.h"
#include "kiln/image.h"
#include "kiln/ops/resize.h"

namespace kiln::test {

// Images of the given shapes filled with uniform random values in [lo, hi] (integers for u8), from `seed`.
VarShapeBatch random_batch(const std::vector<ImageShape>& shapes, uint32_t seed, float lo = 0.0f, float hi = 255.0f);
// Each image of `images` written as `dir`/<index>.png; their paths, in order (a test failure for one that could not
// be written).
std::vector<std::string> png_files_write(const VarShapeBatch& images, const std::string& dir);
// Images of the given shapes, every byte `fill` (to detect pixels an op did not write).
VarShapeBatch filled_batch(const std::vector<ImageShape>& shapes, uint8_t fill = 0xCD);

// An OpenCV header over a kiln HWC image (no copy): CV_8UC(n), CV_32FC(n) or CV_16FC(n).
cv::Mat cv_view(const ImageView& image);
// A kiln view over an OpenCV matrix (no copy).
ImageView kiln_view(const cv::Mat& mat);

// The cv::InterpolationFlags value of a kiln interpolation.
int cv_interp(Interp interp);

// The value of channel c of pixel (x, y) as float (any type, any layout).
float pixel_value(const ImageView& image, int32_t x, int32_t y, int32_t c);

struct ImageDiff {
  double max_abs = 0;
  double mean_abs = 0;
  int64_t over = 0;  // values with |a - b| > tolerance
  std::string first;  // "x,y,c: a vs b" of the first value over the tolerance
};
// Compares two images of the same shape value by value (layouts may differ).
ImageDiff image_diff(const ImageView& a, const ImageView& b, double tolerance = 0.0);
// A fatal failure at the first image whose packed bytes differ between two batches of the same shapes (wrap the
// call in ASSERT_NO_FATAL_FAILURE).
void assert_same_bytes(const VarShapeBatch& a, const VarShapeBatch& b);

// Exec options that keep an op on the CPU backend; `pool` may be null (the calling thread only).
ExecOptions cpu_exec(ThreadPool* pool = nullptr);

// The GPU backends this machine can run image-op parity tests on (OpenCL on PoCL included), each with its name.
struct NamedBackend {
  std::string name;
  std::unique_ptr<Backend> backend;
};
std::vector<NamedBackend> gpu_backends_for_parity();

}  // namespace kiln::test
