// Shared by the hdf5_*_test.cpp files: a deterministic synthetic dataset, a writer driving an ImageSink the
// way the render job does (encoders in worker threads, one writer), and a reader returning every dataset.
#pragma once

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "apps/render/hdf5_dataset.h"
#include "apps/render/image_sink.h"

namespace kiln::test {

struct Hdf5Job {
  Compression compression = Compression::kZstd;
  int32_t level = 1;
  PixelType dtype = PixelType::kU8;
  int64_t images_per_file = 0;
  int64_t total = 9000;
  int32_t width = 24;
  int32_t height = 16;
  int32_t seq_len = 12;
  int32_t seq_channels = 1;
  bool has_labels = true;
  int64_t stride = 1;

  DatasetLayout layout() const {
    return DatasetLayout{.total = total, .width = width, .height = height, .dtype = dtype, .seq_len = seq_len,
                         .seq_channels = seq_channels, .has_labels = has_labels};
  }
  DatasetAttributes attributes(const std::string& created_at = "2024-01-02T03:04:05Z") const {
    DatasetAttributes a;
    a.seq_len = seq_len;
    a.stride = stride;
    a.line_width = 1.5;
    a.style = seq_channels == 4 ? "ohlc" : "line";
    a.width = width;
    a.height = height;
    a.dpi = 100;
    a.source = "prices.csv";
    a.column = "close";
    a.skipped_windows = 3;
    a.dropped_no_future = 2;
    a.label_horizon = has_labels ? 5 : 0;
    a.label_threshold = has_labels ? 0.01 : -1;
    a.kiln_version = "0.1.0";
    a.config_json = R"({"seq_len":)" + std::to_string(seq_len) + R"(,"stride":)" + std::to_string(stride) + "}";
    a.created_at = created_at;
    return a;
  }
  OutputSpec spec(const std::string& path, bool resume = false) const {
    return OutputSpec{.path = path,
                      .format = OutputFormat::kHdf5,
                      .compression = compression,
                      .compression_level = level,
                      .images_per_file = images_per_file,
                      .resume = resume};
  }
};

// The deterministic pattern (mirrored in tests/apps/render/test_hdf5_h5py.py).
inline uint8_t pattern_u8(int64_t i, int64_t y, int64_t x) {
  return static_cast<uint8_t>((i * 7 + y * 3 + x * 5 + (i * x * y) % 13) & 0xFF);
}
inline float pattern_f32(int64_t i, int64_t y, int64_t x) {
  return static_cast<float>((i * 31 + y * 17 + x) % 1000) * 0.25f - 100.0f;
}
inline float pattern_sequence(int64_t i, int64_t t, int64_t c) {
  return static_cast<float>(i) + static_cast<float>(t) * 0.5f + static_cast<float>(c) * 0.125f;
}
inline int64_t pattern_index(int64_t i) { return i * 3 + 100; }
inline int8_t pattern_label(int64_t i) { return static_cast<int8_t>(i % 3 - 1); }

inline std::vector<uint8_t> image_bytes(const Hdf5Job& job, int64_t i) {
  const size_t n = static_cast<size_t>(job.width) * static_cast<size_t>(job.height);
  std::vector<uint8_t> bytes(n * pixel_type_size(job.dtype));
  for (int64_t y = 0; y < job.height; ++y) {
    for (int64_t x = 0; x < job.width; ++x) {
      const size_t p = static_cast<size_t>(y * job.width + x);
      if (job.dtype == PixelType::kU8) {
        bytes[p] = pattern_u8(i, y, x);
      } else {
        const float v = pattern_f32(i, y, x);
        std::memcpy(&bytes[p * 4], &v, 4);
      }
    }
  }
  return bytes;
}

// Builds batch [first, first+count) with `threads` encoder threads (as the render workers do).
inline Status batch_make(ImageSink& sink, const Hdf5Job& job, int64_t first, int32_t count, int threads,
                         EncodedBatch* batch) {
  std::vector<std::vector<uint8_t>> encoded(static_cast<size_t>(count));
  std::vector<Status> status(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto encoder = sink.make_encoder();
      if (!encoder) {
        status[static_cast<size_t>(t)] = invalid_argument("no encoder");
        return;
      }
      for (int32_t j = t; j < count; j += threads) {
        std::vector<uint8_t> pixels = image_bytes(job, first + j);
        ImageView view;
        view.data = pixels.data();
        view.width = job.width;
        view.height = job.height;
        view.type = job.dtype;
        view.row_stride = static_cast<int64_t>(job.width) * static_cast<int64_t>(pixel_type_size(job.dtype));
        Status s = encoder->encode(view, encoded[static_cast<size_t>(j)]);
        if (!s.is_ok()) {
          status[static_cast<size_t>(t)] = s;
          return;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (const Status& s : status) KILN_TRY(s);
  batch->clear();
  batch->first = first;
  batch->count = count;
  for (int32_t j = 0; j < count; ++j) {
    const auto& e = encoded[static_cast<size_t>(j)];
    batch->bytes.insert(batch->bytes.end(), e.begin(), e.end());
    batch->offsets.push_back(batch->bytes.size());
    const int64_t i = first + j;
    for (int64_t t = 0; t < job.seq_len; ++t) {
      for (int64_t c = 0; c < job.seq_channels; ++c) batch->sequences.push_back(pattern_sequence(i, t, c));
    }
    batch->index.push_back(pattern_index(i));
    if (job.has_labels) batch->labels.push_back(pattern_label(i));
  }
  return Status::ok();
}

// Writes images [start, stop) in batches cycling through `sizes`.
inline Status job_write(ImageSink& sink, const Hdf5Job& job, int64_t start, int64_t stop, std::vector<int32_t> sizes,
                        int threads = 2) {
  EncodedBatch batch;
  size_t s = 0;
  for (int64_t first = start; first < stop;) {
    const int32_t count = static_cast<int32_t>(std::min<int64_t>(sizes[s++ % sizes.size()], stop - first));
    KILN_TRY(batch_make(sink, job, first, count, threads, &batch));
    KILN_TRY(sink.write(batch));
    first += count;
  }
  return Status::ok();
}

// Opens, writes everything and finishes.
inline Status job_run(const Hdf5Job& job, const std::string& path, std::vector<int32_t> sizes,
                      const std::string& created_at = "2024-01-02T03:04:05Z") {
  KILN_TRY_ASSIGN(auto sink, hdf5_sink_create(job.spec(path)));
  KILN_TRY_ASSIGN(const int64_t start, sink->open(job.layout(), job.attributes(created_at)));
  if (start != 0) return invalid_argument("fresh run resumed at " + std::to_string(start));
  KILN_TRY(job_write(*sink, job, 0, job.total, std::move(sizes)));
  return sink->finish();
}

struct Hdf5Contents {
  std::vector<hsize_t> image_dims;
  hid_t image_class = -1;
  std::vector<uint8_t> images;  // raw element bytes
  std::vector<hsize_t> sequence_dims;
  std::vector<float> sequences;
  std::vector<int64_t> index;
  bool has_labels = false;
  std::vector<int8_t> labels;
  hdf5::FileAttributes attributes;
};

inline std::vector<hsize_t> dims_of(hid_t ds) {
  const hid_t space = H5Dget_space(ds);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  H5Sclose(space);
  return dims;
}

// Reads every dataset with ordinary H5Dread (so filters and VDS mappings are exercised).
inline Result<Hdf5Contents> contents_read(const std::string& path) {
  KILN_TRY_ASSIGN(hdf5::Handle file, hdf5::file_open_read(path));
  Hdf5Contents c;
  KILN_TRY_ASSIGN(c.attributes, hdf5::attributes_read(file.get()));
  auto read = [&](const char* name, hid_t mem_type, size_t elem, auto& out, std::vector<hsize_t>* dims_out) -> Status {
    hdf5::Handle ds = hdf5::dataset_handle(H5Dopen2(file.get(), name, H5P_DEFAULT));
    if (!ds.valid()) return hdf5::error(std::string("open ") + name);
    const std::vector<hsize_t> dims = dims_of(ds.get());
    size_t n = 1;
    for (hsize_t d : dims) n *= d;
    out.resize(n * elem / sizeof(out[0]));
    if (n > 0 && H5Dread(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) {
      return hdf5::error(std::string("read ") + name);
    }
    if (dims_out != nullptr) *dims_out = dims;
    return Status::ok();
  };
  {
    hdf5::Handle ds = hdf5::dataset_handle(H5Dopen2(file.get(), "images", H5P_DEFAULT));
    if (!ds.valid()) return hdf5::error("open images");
    hdf5::Handle type = hdf5::type_handle(H5Dget_type(ds.get()));
    c.image_class = H5Tget_class(type.get());
  }
  const bool f32 = c.image_class == H5T_FLOAT;
  KILN_TRY(read("images", f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT8, f32 ? 4 : 1, c.images, &c.image_dims));
  KILN_TRY(read("sequences", H5T_NATIVE_FLOAT, 4, c.sequences, &c.sequence_dims));
  KILN_TRY(read("index", H5T_NATIVE_INT64, 8, c.index, nullptr));
  c.has_labels = H5Lexists(file.get(), "labels", H5P_DEFAULT) > 0;
  if (c.has_labels) KILN_TRY(read("labels", H5T_NATIVE_INT8, 1, c.labels, nullptr));
  KILN_TRY(file.close());
  return c;
}

// Checks a dataset file holds images [first, first+count) of `job`, byte for byte.
inline void contents_expect(const Hdf5Contents& c, const Hdf5Job& job, int64_t first, int64_t count) {
  ASSERT_EQ(c.image_dims.size(), 3u);
  EXPECT_EQ(c.image_dims[0], static_cast<hsize_t>(count));
  EXPECT_EQ(c.image_dims[1], static_cast<hsize_t>(job.height));
  EXPECT_EQ(c.image_dims[2], static_cast<hsize_t>(job.width));
  EXPECT_EQ(c.image_class, job.dtype == PixelType::kU8 ? H5T_INTEGER : H5T_FLOAT);
  const size_t image_size = static_cast<size_t>(job.width) * job.height * pixel_type_size(job.dtype);
  ASSERT_EQ(c.images.size(), image_size * static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    const std::vector<uint8_t> want = image_bytes(job, first + k);
    if (std::memcmp(want.data(), c.images.data() + static_cast<size_t>(k) * image_size, image_size) != 0) {
      ADD_FAILURE() << "image " << first + k << " differs";
      return;
    }
  }
  const size_t row = static_cast<size_t>(job.seq_len) * job.seq_channels;
  ASSERT_EQ(c.sequence_dims.size(), job.seq_channels == 1 ? 2u : 3u);
  ASSERT_EQ(c.sequences.size(), row * static_cast<size_t>(count));
  ASSERT_EQ(c.index.size(), static_cast<size_t>(count));
  EXPECT_EQ(c.has_labels, job.has_labels);
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = first + k;
    for (int64_t t = 0; t < job.seq_len; ++t) {
      for (int64_t ch = 0; ch < job.seq_channels; ++ch) {
        const float got = c.sequences[static_cast<size_t>(k) * row + static_cast<size_t>(t * job.seq_channels + ch)];
        if (got != pattern_sequence(i, t, ch)) {
          ADD_FAILURE() << "sequence " << i << "," << t << "," << ch << " differs";
          return;
        }
      }
    }
    ASSERT_EQ(c.index[static_cast<size_t>(k)], pattern_index(i));
    if (job.has_labels) {
      ASSERT_EQ(c.labels[static_cast<size_t>(k)], pattern_label(i));
    }
  }
}

}  // namespace kiln::test
