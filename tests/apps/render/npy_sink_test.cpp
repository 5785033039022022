#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "apps/render/image_sink.h"
#include "apps/render/sink_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr int32_t kWidth = 5;
constexpr int32_t kHeight = 3;

DatasetLayout make_layout(int64_t total, PixelType dtype, bool labels) {
  return {.total = total, .width = kWidth, .height = kHeight, .dtype = dtype, .seq_len = 20, .has_labels = labels};
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

// Index rows 0, 1, ...; labels 0, 1, 0, ...
test::SyntheticImages images_of(PixelType dtype) {
  return {kWidth, kHeight, dtype, [dtype](int64_t i) { return make_image_bytes(i, dtype); },
          [](int64_t i) { return i; }, [](int64_t i) { return static_cast<int8_t>(i % 2); }};
}

void write_range(ImageSink& sink, int64_t from, int64_t to, int32_t batch_size, PixelType dtype, bool labels) {
  test::range_write(sink, images_of(dtype), from, to, batch_size, labels);
}

OutputSpec npy_spec(const std::string& path) { return {.path = path, .format = OutputFormat::kNpy}; }

using test::read_file;

void run_complete(const OutputSpec& spec, int64_t total, int32_t batch_size, PixelType dtype, bool labels) {
  test::run_complete(spec, make_layout(total, dtype, labels), make_attributes(), images_of(dtype), batch_size);
}

// An NPY v1.0 file: its bytes, the header dict text and where the data starts.
struct NpyFile {
  std::string bytes;
  std::string header;
  size_t data_offset = 0;
};

// Reads the file at `path` and parses its header.
NpyFile npy_read(const std::string& path) {
  NpyFile npy;
  npy.bytes = read_file(path);
  const std::string& file = npy.bytes;
  EXPECT_GE(file.size(), 10u);
  EXPECT_EQ(file.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(file[6], 1);
  EXPECT_EQ(file[7], 0);
  const size_t header_len = static_cast<uint8_t>(file[8]) | (static_cast<size_t>(static_cast<uint8_t>(file[9])) << 8);
  npy.data_offset = 10 + header_len;
  EXPECT_EQ(npy.data_offset % 64, 0u) << "data must start 64-byte aligned";
  npy.header = file.substr(10, header_len);
  return npy;
}

bool numpy_available() { return test::run_command("/usr/bin/python3 -c 'import numpy'").exit_code == 0; }

TEST(NpySink, WritesValidU8ArrayAndIndex) {
  test::TempDir tmp;
  const std::string path = tmp.file("out.npy");
  ASSERT_NO_FATAL_FAILURE(run_complete(npy_spec(path), 7, 3, PixelType::kU8, true));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_FALSE(fs::exists(path + ".progress"));

  const NpyFile npy = npy_read(path);
  EXPECT_EQ(npy.header.rfind("{'descr': '|u1', 'fortran_order': False, 'shape': (7, 3, 5), }", 0), 0u) << npy.header;
  EXPECT_EQ(npy.header.back(), '\n');
  ASSERT_EQ(npy.bytes.size(), npy.data_offset + 7u * kWidth * kHeight);
  for (int64_t i = 0; i < 7; ++i) {
    const std::vector<uint8_t> expected = make_image_bytes(i, PixelType::kU8);
    EXPECT_EQ(npy.bytes.substr(npy.data_offset + static_cast<size_t>(i) * expected.size(), expected.size()),
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
  const NpyFile npy = npy_read(path);
  EXPECT_EQ(npy.header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3, 5), }", 0), 0u) << npy.header;
  ASSERT_EQ(npy.bytes.size(), npy.data_offset + 4u * kWidth * kHeight * 4);
  const std::vector<uint8_t> last = make_image_bytes(3, PixelType::kF32);
  EXPECT_EQ(npy.bytes.substr(npy.data_offset + 3 * last.size()), std::string(last.begin(), last.end()));
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
  const NpyFile npy = npy_read(path);
  EXPECT_NE(npy.header.find("'shape': (0, 3, 5)"), std::string::npos);
  EXPECT_EQ(npy.bytes.size(), npy.data_offset);
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
  EXPECT_NE(npy_read(path).header.find("(5, 3, 5)"), std::string::npos);
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
  ImageView view = image_view_packed(pixels.data(), kWidth, kHeight, 1, PixelType::kF32);
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
