#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "apps/render/image_sink.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr int32_t kWidth = 5;
constexpr int32_t kHeight = 3;

DatasetLayout make_layout(int64_t total, PixelType dtype, bool labels) {
  DatasetLayout layout;
  layout.total = total;
  layout.width = kWidth;
  layout.height = kHeight;
  layout.dtype = dtype;
  layout.seq_len = 20;
  layout.has_labels = labels;
  return layout;
}

DatasetAttributes make_attributes(const std::string& created_at = "2024-01-01T00:00:00Z") {
  DatasetAttributes a;
  a.seq_len = 20;
  a.stride = 1;
  a.line_width = 1.0;
  a.style = "ohlc";
  a.width = kWidth;
  a.height = kHeight;
  a.source = "demo";
  a.column = "close";
  a.kiln_version = "0.1.0";
  a.config_json = "{}";
  a.created_at = created_at;
  return a;
}

// Image `ordinal` as u8 or f32 pixels (f32 values are ordinal-dependent fractions).
std::vector<uint8_t> make_image_bytes(int64_t ordinal, PixelType dtype) {
  const size_t n = static_cast<size_t>(kWidth * kHeight);
  std::vector<uint8_t> bytes(n * pixel_type_size(dtype));
  for (size_t p = 0; p < n; ++p) {
    if (dtype == PixelType::kU8) {
      bytes[p] = static_cast<uint8_t>((ordinal * 7 + static_cast<int64_t>(p)) % 251);
    } else {
      const float v = static_cast<float>(ordinal % 1000) / 1000.0f + static_cast<float>(p) * 0.25f;
      std::memcpy(bytes.data() + p * 4, &v, 4);
    }
  }
  return bytes;
}

EncodedBatch make_batch(ImageEncoder& encoder, int64_t first, int32_t count, PixelType dtype, bool labels) {
  EncodedBatch batch;
  batch.clear();
  batch.first = first;
  batch.count = count;
  for (int32_t k = 0; k < count; ++k) {
    std::vector<uint8_t> pixels = make_image_bytes(first + k, dtype);
    ImageView view;
    view.data = pixels.data();
    view.width = kWidth;
    view.height = kHeight;
    view.type = dtype;
    view.row_stride = kWidth * static_cast<int64_t>(pixel_type_size(dtype));
    EXPECT_TRUE(encoder.encode(view, batch.bytes).is_ok());
    batch.offsets.push_back(batch.bytes.size());
    batch.index.push_back(first + k);
    if (labels) batch.labels.push_back(static_cast<int8_t>((first + k) % 2));
  }
  return batch;
}

void write_range(ImageSink& sink, int64_t from, int64_t to, int32_t batch_size, PixelType dtype, bool labels) {
  auto encoder = sink.make_encoder();
  for (int64_t first = from; first < to; first += batch_size) {
    const int32_t count = static_cast<int32_t>(std::min<int64_t>(batch_size, to - first));
    ASSERT_TRUE(sink.write(make_batch(*encoder, first, count, dtype, labels)).is_ok());
  }
}

OutputSpec npy_spec(const std::string& path) {
  OutputSpec spec;
  spec.path = path;
  spec.format = OutputFormat::kNpy;
  return spec;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void run_complete(const OutputSpec& spec, int64_t total, int32_t batch_size, PixelType dtype, bool labels) {
  auto sink = sink_create(spec);
  ASSERT_TRUE(sink.is_ok()) << sink.status().to_string();
  auto done = (*sink)->open(make_layout(total, dtype, labels), make_attributes());
  ASSERT_TRUE(done.is_ok()) << done.status().to_string();
  ASSERT_EQ(done.value(), 0);
  write_range(**sink, 0, total, batch_size, dtype, labels);
  ASSERT_TRUE((*sink)->finish().is_ok());
}

// Parses the NPY v1.0 header; returns the header dict text and sets data_offset.
std::string npy_header_text(const std::string& file, size_t& data_offset) {
  EXPECT_GE(file.size(), 10u);
  EXPECT_EQ(file.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(file[6], 1);
  EXPECT_EQ(file[7], 0);
  const size_t header_len = static_cast<uint8_t>(file[8]) | (static_cast<size_t>(static_cast<uint8_t>(file[9])) << 8);
  data_offset = 10 + header_len;
  EXPECT_EQ(data_offset % 64, 0u) << "data must start 64-byte aligned";
  return file.substr(10, header_len);
}

bool numpy_available() { return test::run_command("/usr/bin/python3 -c 'import numpy'").exit_code == 0; }

TEST(NpySink, WritesValidU8ArrayAndIndex) {
  test::TempDir tmp;
  const std::string path = tmp.file("out.npy");
  ASSERT_NO_FATAL_FAILURE(run_complete(npy_spec(path), 7, 3, PixelType::kU8, true));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_FALSE(fs::exists(path + ".progress"));

  const std::string file = read_file(path);
  size_t offset = 0;
  const std::string header = npy_header_text(file, offset);
  EXPECT_EQ(header.rfind("{'descr': '|u1', 'fortran_order': False, 'shape': (7, 3, 5), }", 0), 0u) << header;
  EXPECT_EQ(header.back(), '\n');
  ASSERT_EQ(file.size(), offset + 7u * kWidth * kHeight);
  for (int64_t i = 0; i < 7; ++i) {
    const std::vector<uint8_t> expected = make_image_bytes(i, PixelType::kU8);
    EXPECT_EQ(file.substr(offset + static_cast<size_t>(i) * expected.size(), expected.size()),
              std::string(expected.begin(), expected.end()))
        << "image " << i;
  }

  std::string csv = "image,start_row,label\n";
  for (int i = 0; i < 7; ++i) csv += std::to_string(i) + "," + std::to_string(i) + "," + std::to_string(i % 2) + "\n";
  EXPECT_EQ(read_file(tmp.file("out.index.csv")), csv);

  if (numpy_available()) {
    const auto result = test::run_command(
        "/usr/bin/python3 -c \"import numpy as np; a = np.load('" + path +
        "'); assert a.shape == (7, 3, 5) and a.dtype == np.uint8, (a.shape, a.dtype); print(int(a.sum()))\"");
    ASSERT_EQ(result.exit_code, 0) << result.output;
    int64_t sum = 0;
    for (int64_t i = 0; i < 7; ++i)
      for (uint8_t v : make_image_bytes(i, PixelType::kU8)) sum += v;
    EXPECT_EQ(std::stoll(result.output), sum);
  }
}

TEST(NpySink, WritesValidF32Array) {
  test::TempDir tmp;
  const std::string path = tmp.file("f32.npy");
  ASSERT_NO_FATAL_FAILURE(run_complete(npy_spec(path), 4, 4, PixelType::kF32, false));
  const std::string file = read_file(path);
  size_t offset = 0;
  const std::string header = npy_header_text(file, offset);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3, 5), }", 0), 0u) << header;
  ASSERT_EQ(file.size(), offset + 4u * kWidth * kHeight * 4);
  const std::vector<uint8_t> last = make_image_bytes(3, PixelType::kF32);
  EXPECT_EQ(file.substr(offset + 3 * last.size()), std::string(last.begin(), last.end()));
  EXPECT_EQ(read_file(tmp.file("f32.index.csv")), "image,start_row,label\n0,0,\n1,1,\n2,2,\n3,3,\n");
  if (numpy_available()) {
    const auto result = test::run_command("/usr/bin/python3 -c \"import numpy as np; a = np.load('" + path +
                                          "'); assert a.dtype == np.float32 and a.shape == (4, 3, 5); "
                                          "assert abs(float(a[3, 0, 1]) - 0.253) < 1e-6, a[3, 0, 1]\"");
    EXPECT_EQ(result.exit_code, 0) << result.output;
  }
}

TEST(NpySink, EmptyJobIsAValidArray) {
  test::TempDir tmp;
  const std::string path = tmp.file("empty.npy");
  ASSERT_NO_FATAL_FAILURE(run_complete(npy_spec(path), 0, 4, PixelType::kU8, false));
  const std::string file = read_file(path);
  size_t offset = 0;
  EXPECT_NE(npy_header_text(file, offset).find("'shape': (0, 3, 5)"), std::string::npos);
  EXPECT_EQ(file.size(), offset);
}

TEST(NpySink, RefusesExistingOutputWithoutFlags) {
  test::TempDir tmp;
  const std::string path = tmp.file("out.npy");
  ASSERT_NO_FATAL_FAILURE(run_complete(npy_spec(path), 3, 3, PixelType::kU8, false));
  const std::string before = read_file(path);
  auto sink = sink_create(npy_spec(path));
  auto done = (*sink)->open(make_layout(3, PixelType::kU8, false), make_attributes());
  ASSERT_FALSE(done.is_ok());
  EXPECT_EQ(done.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(done.status().message().find("exists (use --resume to continue or --overwrite to replace)"),
            std::string::npos);
  EXPECT_EQ(read_file(path), before);

  OutputSpec spec = npy_spec(path);
  spec.overwrite = true;
  ASSERT_NO_FATAL_FAILURE(run_complete(spec, 5, 2, PixelType::kF32, false));
  size_t offset = 0;
  EXPECT_NE(npy_header_text(read_file(path), offset).find("(5, 3, 5)"), std::string::npos);
}

TEST(NpySink, ResumeAfterCrashEqualsUninterruptedRun) {
  // 9000 images cross the 4096-image commit point; the crash leaves uncommitted images past it.
  constexpr int64_t kTotal = 9000;
  test::TempDir tmp;
  const std::string reference = tmp.file("reference.npy");
  ASSERT_NO_FATAL_FAILURE(run_complete(npy_spec(reference), kTotal, 1000, PixelType::kU8, true));

  const std::string path = tmp.file("out.npy");
  {
    auto sink = sink_create(npy_spec(path));
    ASSERT_TRUE((*sink)->open(make_layout(kTotal, PixelType::kU8, true), make_attributes()).is_ok());
    write_range(**sink, 0, 7000, 1000, PixelType::kU8, true);
    // dropped without finish()
  }
  ASSERT_TRUE(fs::exists(path + ".tmp"));
  ASSERT_FALSE(fs::exists(path));
  const auto progress = nlohmann::json::parse(read_file(path + ".progress"));
  EXPECT_EQ(progress.at("images_done"), 5000);  // committed after the batch that crossed 4096
  EXPECT_EQ(progress.at("seq_len"), 20);
  std::ofstream(tmp.file("out.index.csv"), std::ios::app) << "7000,70";  // torn last line

  OutputSpec spec = npy_spec(path);
  spec.resume = true;
  auto sink = sink_create(spec);
  auto done = (*sink)->open(make_layout(kTotal, PixelType::kU8, true), make_attributes("2025-02-02T00:00:00Z"));
  ASSERT_TRUE(done.is_ok()) << done.status().to_string();
  ASSERT_EQ(done.value(), 5000);
  write_range(**sink, 5000, kTotal, 777, PixelType::kU8, true);
  ASSERT_TRUE((*sink)->finish().is_ok());

  EXPECT_EQ(read_file(path), read_file(reference));
  EXPECT_EQ(read_file(tmp.file("out.index.csv")), read_file(tmp.file("reference.index.csv")));
  EXPECT_FALSE(fs::exists(path + ".progress"));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(NpySink, ResumeChecksTheJob) {
  test::TempDir tmp;
  const std::string path = tmp.file("out.npy");
  {
    auto sink = sink_create(npy_spec(path));
    ASSERT_TRUE((*sink)->open(make_layout(10, PixelType::kU8, false), make_attributes()).is_ok());
    write_range(**sink, 0, 4, 2, PixelType::kU8, false);
  }
  OutputSpec spec = npy_spec(path);
  spec.resume = true;
  DatasetAttributes other = make_attributes();
  other.style = "line";
  auto sink = sink_create(spec);
  auto refused = (*sink)->open(make_layout(10, PixelType::kU8, false), other);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("style"), std::string::npos);

  // Nothing was committed past the start: resume continues at 0.
  auto same = sink_create(spec);
  auto done = (*same)->open(make_layout(10, PixelType::kU8, false), make_attributes());
  ASSERT_TRUE(done.is_ok()) << done.status().to_string();
  EXPECT_EQ(done.value(), 0);
  write_range(**same, 0, 10, 4, PixelType::kU8, false);
  ASSERT_TRUE((*same)->finish().is_ok());

  // A finished array of the same shape is already done; a different shape is refused.
  auto again = sink_create(spec);
  auto complete = (*again)->open(make_layout(10, PixelType::kU8, false), make_attributes());
  ASSERT_TRUE(complete.is_ok());
  EXPECT_EQ(complete.value(), 10);
  EXPECT_TRUE((*again)->finish().is_ok());
  auto reshaped = sink_create(spec);
  EXPECT_EQ((*reshaped)->open(make_layout(11, PixelType::kU8, false), make_attributes()).status().code(),
            Errc::kInvalidArgument);
}

TEST(NpySink, EncoderChecksDtypeAndShape) {
  test::TempDir tmp;
  auto sink = sink_create(npy_spec(tmp.file("out.npy")));
  ASSERT_TRUE((*sink)->open(make_layout(2, PixelType::kU8, false), make_attributes()).is_ok());
  auto encoder = (*sink)->make_encoder();
  std::vector<uint8_t> pixels(64 * 4);
  ImageView view;
  view.data = pixels.data();
  view.width = kWidth;
  view.height = kHeight;
  view.type = PixelType::kF32;
  view.row_stride = kWidth * 4;
  std::vector<uint8_t> out;
  EXPECT_EQ(encoder->encode(view, out).code(), Errc::kInvalidArgument);
  view.type = PixelType::kU8;
  view.width = kWidth + 1;
  view.row_stride = 16;
  EXPECT_EQ(encoder->encode(view, out).code(), Errc::kInvalidArgument);
  view.width = kWidth;
  ASSERT_TRUE(encoder->encode(view, out).is_ok());  // strided source, packed result
  EXPECT_EQ(out.size(), static_cast<size_t>(kWidth * kHeight));
  EXPECT_NE((*sink)->describe().find("npy"), std::string::npos);
}

}  // namespace
}  // namespace kiln
