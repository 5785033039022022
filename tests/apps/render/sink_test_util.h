// Shared by the image-folder and NPY sink tests: a synthetic dataset computed from the image ordinal, written
// through a sink the way the render job does (one encoder, batches in job order).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "apps/render/image_sink.h"

namespace kiln::test {

// Image i of a 1-channel dataset: its packed pixels, its index row (start row) and its label.
struct SyntheticImages {
  int32_t width = 0;
  int32_t height = 0;
  PixelType dtype = PixelType::kU8;
  std::function<std::vector<uint8_t>(int64_t)> pixels;
  std::function<int64_t(int64_t)> index;
  std::function<int8_t(int64_t)> label;
};

// Images [first, first + count) encoded into one batch, with labels when `labels`.
inline EncodedBatch batch_encode(ImageEncoder& encoder, const SyntheticImages& images, int64_t first, int32_t count,
                                 bool labels) {
  EncodedBatch batch;
  batch.clear();
  batch.first = first;
  batch.count = count;
  for (int64_t i = first; i < first + count; ++i) {
    std::vector<uint8_t> pixels = images.pixels(i);
    const ImageView view = image_view_packed(pixels.data(), images.width, images.height, 1, images.dtype);
    EXPECT_TRUE(encoder.encode(view, batch.bytes).is_ok());
    batch.offsets.push_back(batch.bytes.size());
    batch.index.push_back(images.index(i));
    if (labels) batch.labels.push_back(images.label(i));
  }
  return batch;
}

// Writes images [from, to) in batches of batch_size (the last one shorter).
inline void range_write(ImageSink& sink, const SyntheticImages& images, int64_t from, int64_t to, int32_t batch_size,
                        bool labels) {
  auto encoder = sink.make_encoder();
  ASSERT_TRUE(encoder);
  for (int64_t first = from; first < to; first += batch_size) {
    const int32_t count = static_cast<int32_t>(std::min<int64_t>(batch_size, to - first));
    ASSERT_TRUE(sink.write(batch_encode(*encoder, images, first, count, labels)).is_ok());
  }
}

// A fresh output: opened at image 0, every image of `layout` written, finished.
inline void run_complete(const OutputSpec& spec, const DatasetLayout& layout, const DatasetAttributes& attributes,
                         const SyntheticImages& images, int32_t batch_size) {
  auto sink = sink_create(spec);
  ASSERT_TRUE(sink.is_ok()) << sink.status().to_string();
  auto done = (*sink)->open(layout, attributes);
  ASSERT_TRUE(done.is_ok()) << done.status().to_string();
  ASSERT_EQ(done.value(), 0);
  range_write(**sink, images, 0, layout.total, batch_size, layout.has_labels);
  ASSERT_TRUE((*sink)->finish().is_ok());
}

}  // namespace kiln::test
