#include "common/image_ops_util.h"

#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "backend_ops/test_backends.h"
#include "kiln/codec.h"
#include "ops/image_desc.h"

namespace kiln::test {

std::vector<std::string> png_files_write(const VarShapeBatch& images, const std::string& dir) {
  std::vector<std::string> files;
  for (int64_t i = 0; i < images.count(); ++i) {
    files.push_back(dir + "/" + std::to_string(i) + ".png");
    const Status written = image_encode_file(images[i], files.back());
    EXPECT_TRUE(written.is_ok()) << files.back() << ": " << written.to_string();
  }
  return files;
}

VarShapeBatch random_batch(const std::vector<ImageShape>& shapes, uint32_t seed, float lo, float hi) {
  VarShapeBatch batch = VarShapeBatch::allocate(shapes);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < batch.count(); ++i) {
    const ImageView& v = batch[i];
    const int64_t n = static_cast<int64_t>(v.width) * v.height * v.channels;
    auto* bytes = static_cast<uint8_t*>(v.data);
    if (v.type == PixelType::kU8) {
      std::uniform_int_distribution<int> dist(static_cast<int>(lo), static_cast<int>(hi));
      for (int64_t k = 0; k < n; ++k) bytes[k] = static_cast<uint8_t>(dist(rng));
    } else {
      std::uniform_real_distribution<float> dist(lo, hi);
      for (int64_t k = 0; k < n; ++k) {
        const float value = dist(rng);
        if (v.type == PixelType::kF32) {
          std::memcpy(bytes + 4 * k, &value, 4);
        } else {
          const auto half = static_cast<uint16_t>(kiln_float_to_half(value));
          std::memcpy(bytes + 2 * k, &half, 2);
        }
      }
    }
  }
  return batch;
}

VarShapeBatch filled_batch(const std::vector<ImageShape>& shapes, uint8_t fill) {
  VarShapeBatch batch = VarShapeBatch::allocate(shapes);
  for (int64_t i = 0; i < batch.count(); ++i) std::memset(batch[i].data, fill, batch[i].packed_bytes());
  return batch;
}

cv::Mat cv_view(const ImageView& image) {
  const int depth = image.type == PixelType::kU8 ? CV_8U : (image.type == PixelType::kF32 ? CV_32F : CV_16F);
  return cv::Mat(image.height, image.width, CV_MAKETYPE(depth, image.channels), image.data,
                 static_cast<size_t>(image.row_stride));
}

ImageView kiln_view(const cv::Mat& mat) {
  ImageView v;
  v.data = mat.data;
  v.width = mat.cols;
  v.height = mat.rows;
  v.channels = mat.channels();
  v.type = mat.depth() == CV_8U ? PixelType::kU8 : (mat.depth() == CV_32F ? PixelType::kF32 : PixelType::kF16);
  v.row_stride = static_cast<int64_t>(mat.step[0]);
  return v;
}

int cv_interp(Interp interp) {
  switch (interp) {
    case Interp::kNearest: return cv::INTER_NEAREST;
    case Interp::kBilinear: return cv::INTER_LINEAR;
    case Interp::kArea: return cv::INTER_AREA;
    case Interp::kBicubic: return cv::INTER_CUBIC;
  }
  return cv::INTER_LINEAR;
}

float pixel_value(const ImageView& image, int32_t x, int32_t y, int32_t c) {
  const KilnImageDesc d = image_desc(image);
  return kiln_px_load(static_cast<const uint8_t*>(image.data), d, x, y, c);
}

ImageDiff image_diff(const ImageView& a, const ImageView& b, double tolerance) {
  ImageDiff diff;
  if (a.width != b.width || a.height != b.height || a.channels != b.channels) {
    diff.over = 1;
    diff.max_abs = INFINITY;
    diff.first = "shapes differ";
    return diff;
  }
  double sum = 0;
  for (int32_t y = 0; y < a.height; ++y) {
    for (int32_t x = 0; x < a.width; ++x) {
      for (int32_t c = 0; c < a.channels; ++c) {
        const float va = pixel_value(a, x, y, c);
        const float vb = pixel_value(b, x, y, c);
        const bool both_nan = std::isnan(va) && std::isnan(vb);
        const double d = both_nan ? 0.0 : std::fabs(static_cast<double>(va) - vb);
        const double dd = std::isnan(d) ? INFINITY : d;
        sum += dd;
        diff.max_abs = std::max(diff.max_abs, dd);
        if (dd > tolerance) {
          if (diff.over == 0) {
            std::ostringstream s;
            s << x << "," << y << "," << c << ": " << va << " vs " << vb;
            diff.first = s.str();
          }
          ++diff.over;
        }
      }
    }
  }
  diff.mean_abs = sum / std::max<double>(1.0, static_cast<double>(a.width) * a.height * a.channels);
  return diff;
}

void assert_same_bytes(const VarShapeBatch& a, const VarShapeBatch& b) {
  ASSERT_EQ(a.count(), b.count());
  for (int64_t i = 0; i < a.count(); ++i) {
    ASSERT_EQ(std::memcmp(a[i].data, b[i].data, a[i].packed_bytes()), 0) << "image " << i;
  }
}

ExecOptions cpu_exec(ThreadPool* pool) {
  ExecOptions exec;
  exec.mode = ExecMode::kCpu;
  exec.pool = pool;
  return exec;
}

std::vector<NamedBackend> gpu_backends_for_parity() {
  std::vector<NamedBackend> out;
  for (BackendKind kind : {BackendKind::kCuda, BackendKind::kOpenCL}) {
    auto created = gpu_backend_for_test(kind);
    if (created.is_ok()) out.push_back({backend_kind_name(kind), std::move(created).value()});
  }
  return out;
}

}  // namespace kiln::test
