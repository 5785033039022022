#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "apps/render/image_sink.h"
#include "apps/render/sink_test_util.h"

#if KILN_HAS_JPEG
#include "apps/render/image_folder_sink.h"
#include "io/jpeg_codec.h"
#include "io/png_codec.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int32_t kWidth = 24;
constexpr int32_t kHeight = 16;

DatasetLayout make_layout(int64_t total, bool labels) {
  return {.total = total, .width = kWidth, .height = kHeight, .seq_len = 30, .has_labels = labels};
}

DatasetAttributes make_attributes(const std::string& created_at = "2024-01-01T00:00:00Z") {
  DatasetAttributes a;
  a.seq_len = 30;
  a.stride = 2;
  a.line_width = 1.5;
  a.style = "line";
  a.width = kWidth;
  a.height = kHeight;
  a.dpi = 100;
  a.source = "prices.csv";
  a.column = "close";
  a.skipped_windows = 3;
  a.dropped_no_future = 5;
  a.label_horizon = 5;
  a.label_threshold = 0.01;
  a.kiln_version = "0.1.0";
  a.config_json = R"({"seq_len":30})";
  a.created_at = created_at;
  return a;
}

// A chart-like deterministic image per ordinal: white with a dark diagonal stroke.
std::vector<uint8_t> make_pixels(int64_t ordinal) {
  std::vector<uint8_t> pixels(static_cast<size_t>(kWidth * kHeight), 255);
  for (int32_t x = 0; x < kWidth; ++x) {
    const int32_t y = static_cast<int32_t>((x + ordinal * 3) % kHeight);
    pixels[static_cast<size_t>(y * kWidth + x)] = static_cast<uint8_t>(ordinal % 200);
  }
  return pixels;
}

// Index rows 100, 102, ...; labels -1, 0, 1, -1, ...
const test::SyntheticImages kImages{kWidth, kHeight, PixelType::kU8, make_pixels,
                                    [](int64_t i) { return 100 + 2 * i; },
                                    [](int64_t i) { return static_cast<int8_t>(i % 3 - 1); }};

EncodedBatch make_batch(ImageEncoder& encoder, int64_t first, int32_t count, bool labels) {
  return test::batch_encode(encoder, kImages, first, count, labels);
}

void write_range(ImageSink& sink, int64_t from, int64_t to, int32_t batch_size, bool labels) {
  test::range_write(sink, kImages, from, to, batch_size, labels);
}

OutputSpec png_spec(const std::string& path) { return {.path = path, .format = OutputFormat::kPng}; }

using test::read_file;

std::set<std::string> list_dir(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

json read_json(const fs::path& path) { return json::parse(read_file(path)); }

void run_complete(const OutputSpec& spec, int64_t total, int32_t batch_size, bool labels,
                  const std::string& created_at = "2024-01-01T00:00:00Z") {
  test::run_complete(spec, make_layout(total, labels), make_attributes(created_at), kImages, batch_size);
}

TEST(ImageFolderSink, WritesNamedPngFilesIndexAndManifest) {
  test::TempDir tmp;
  const std::string out = tmp.file("out");
  ASSERT_NO_FATAL_FAILURE(run_complete(png_spec(out), 10, 4, /*labels=*/true));

  std::set<std::string> expected = {"index.csv", "manifest.json"};
  for (int i = 0; i < 10; ++i) expected.insert("price_pattern_00000" + std::to_string(i) + ".png");
  EXPECT_EQ(list_dir(out), expected);

  for (int64_t i = 0; i < 10; ++i) {
    const std::string bytes = read_file(fs::path(out) / image_file_name(i, "png"));
    auto decoded = png_decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
    EXPECT_EQ(decoded->width, kWidth);
    EXPECT_EQ(decoded->height, kHeight);
    EXPECT_EQ(decoded->channels, 1);
    EXPECT_EQ(decoded->pixels, make_pixels(i)) << "image " << i;
  }

  std::string csv = "image,start_row,label\n";
  for (int64_t i = 0; i < 10; ++i)
    csv += image_file_name(i, "png") + "," + std::to_string(100 + 2 * i) + "," + std::to_string(i % 3 - 1) + "\n";
  EXPECT_EQ(read_file(fs::path(out) / "index.csv"), csv);

  const json manifest = read_json(fs::path(out) / "manifest.json");
  EXPECT_EQ(manifest.at("complete"), true);
  EXPECT_EQ(manifest.at("count"), 10);
  EXPECT_EQ(manifest.at("format"), "png");
  EXPECT_EQ(manifest.at("dtype"), "uint8");
  EXPECT_EQ(manifest.at("shape"), json::array({10, kHeight, kWidth}));
  EXPECT_EQ(manifest.at("seq_len"), 30);
  EXPECT_EQ(manifest.at("stride"), 2);
  EXPECT_EQ(manifest.at("line_width"), 1.5);
  EXPECT_EQ(manifest.at("style"), "line");
  EXPECT_EQ(manifest.at("width"), kWidth);
  EXPECT_EQ(manifest.at("height"), kHeight);
  EXPECT_EQ(manifest.at("dpi"), 100);
  EXPECT_EQ(manifest.at("source"), "prices.csv");
  EXPECT_EQ(manifest.at("column"), "close");
  EXPECT_EQ(manifest.at("skipped_windows"), 3);
  EXPECT_EQ(manifest.at("dropped_no_future"), 5);
  EXPECT_EQ(manifest.at("label_horizon"), 5);
  EXPECT_EQ(manifest.at("label_threshold"), 0.01);
  EXPECT_EQ(manifest.at("kiln_version"), "0.1.0");
  EXPECT_EQ(manifest.at("config_json"), R"({"seq_len":30})");
  EXPECT_EQ(manifest.at("created_at"), "2024-01-01T00:00:00Z");
}

TEST(ImageFolderSink, JpegFolderWithoutLabels) {
  test::TempDir tmp;
  OutputSpec spec = png_spec(tmp.file("jpg"));
  spec.format = OutputFormat::kJpeg;
  spec.jpeg_quality = 90;
  ASSERT_NO_FATAL_FAILURE(run_complete(spec, 3, 2, /*labels=*/false));
  EXPECT_EQ(list_dir(spec.path), (std::set<std::string>{"index.csv", "manifest.json", "price_pattern_000000.jpg",
                                                        "price_pattern_000001.jpg", "price_pattern_000002.jpg"}));
  const std::string bytes = read_file(fs::path(spec.path) / "price_pattern_000002.jpg");
  auto decoded = jpeg_decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->width, kWidth);
  EXPECT_EQ(decoded->height, kHeight);
  EXPECT_EQ(decoded->channels, 1);
  EXPECT_EQ(read_file(fs::path(spec.path) / "index.csv"),
            "image,start_row,label\nprice_pattern_000000.jpg,100,\nprice_pattern_000001.jpg,102,\n"
            "price_pattern_000002.jpg,104,\n");
  EXPECT_EQ(read_json(fs::path(spec.path) / "manifest.json").at("format"), "jpeg");
}

TEST(ImageFolderSink, FileNamesGrowPastSixDigits) {
  EXPECT_EQ(image_file_name(0, "png"), "price_pattern_000000.png");
  EXPECT_EQ(image_file_name(123456, "jpg"), "price_pattern_123456.jpg");
  EXPECT_EQ(image_file_name(1234567, "png"), "price_pattern_1234567.png");
}

TEST(ImageFolderSink, RefusesFloat32) {
  test::TempDir tmp;
  for (OutputFormat format : {OutputFormat::kPng, OutputFormat::kJpeg}) {
    OutputSpec spec = png_spec(tmp.file("f32"));
    spec.format = format;
    auto sink = sink_create(spec);
    ASSERT_TRUE(sink.is_ok());
    DatasetLayout layout = make_layout(4, false);
    layout.dtype = PixelType::kF32;
    auto done = (*sink)->open(layout, make_attributes());
    ASSERT_FALSE(done.is_ok());
    EXPECT_EQ(done.status().code(), Errc::kUnsupportedFormat);
    EXPECT_NE(done.status().message().find("--dtype uint8"), std::string::npos);
  }
}

TEST(ImageFolderSink, RefusesExistingFolderWithoutFlags) {
  test::TempDir tmp;
  const std::string out = tmp.file("out");
  fs::create_directories(out);
  test::write_text_file(out + "/notes.txt", "mine");
  auto sink = sink_create(png_spec(out));
  ASSERT_TRUE(sink.is_ok());
  auto done = (*sink)->open(make_layout(4, false), make_attributes());
  ASSERT_FALSE(done.is_ok());
  EXPECT_EQ(done.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(done.status().message().find("exists (use --resume to continue or --overwrite to replace)"),
            std::string::npos);
  EXPECT_EQ(list_dir(out), std::set<std::string>{"notes.txt"});

  // An existing empty folder is fine.
  const std::string empty = tmp.file("empty");
  fs::create_directories(empty);
  ASSERT_NO_FATAL_FAILURE(run_complete(png_spec(empty), 2, 2, false));
}

TEST(ImageFolderSink, OverwriteRemovesOnlyOwnFiles) {
  test::TempDir tmp;
  const std::string out = tmp.file("out");
  ASSERT_NO_FATAL_FAILURE(run_complete(png_spec(out), 10, 4, true));
  test::write_text_file(out + "/notes.txt", "mine");
  test::write_text_file(out + "/other.png", "not ours");
  OutputSpec spec = png_spec(out);
  spec.overwrite = true;
  ASSERT_NO_FATAL_FAILURE(run_complete(spec, 3, 4, false));
  EXPECT_EQ(list_dir(out), (std::set<std::string>{"index.csv", "manifest.json", "notes.txt", "other.png",
                                                  "price_pattern_000000.png", "price_pattern_000001.png",
                                                  "price_pattern_000002.png"}));
  EXPECT_EQ(read_json(fs::path(out) / "manifest.json").at("count"), 3);
  EXPECT_EQ(read_file(fs::path(out) / "notes.txt"), "mine");
}

// Simulates a killed run: images [0, written) with their index rows, then a half-written image, a stray
// temp file and a partial index line, and no finish().
void crash_run(const OutputSpec& spec, int64_t total, int64_t written, int32_t batch_size, bool labels) {
  auto sink = sink_create(spec);
  ASSERT_TRUE(sink.is_ok());
  auto done = (*sink)->open(make_layout(total, labels), make_attributes("2024-01-01T00:00:00Z"));
  ASSERT_TRUE(done.is_ok()) << done.status().to_string();
  write_range(**sink, 0, written, batch_size, labels);
  sink->reset();  // dropped without finish()
  const fs::path dir = spec.path;
  test::write_text_file((dir / (image_file_name(written, "png") + ".tmp")).string(), "half an image");
  // An image that made it to disk before its index row did: must be rewritten, not trusted.
  fs::copy_file(dir / image_file_name(0, "png"), dir / image_file_name(written, "png"));
  std::ofstream(dir / "index.csv", std::ios::app) << image_file_name(written, "png") << ",1";
}

TEST(ImageFolderSink, ResumeAfterCrashEqualsUninterruptedRun) {
  test::TempDir tmp;
  const std::string reference = tmp.file("reference");
  ASSERT_NO_FATAL_FAILURE(run_complete(png_spec(reference), 23, 5, true));

  const std::string out = tmp.file("out");
  ASSERT_NO_FATAL_FAILURE(crash_run(png_spec(out), 23, 10, 5, true));
  EXPECT_FALSE(fs::exists(fs::path(out) / "manifest.json"));

  OutputSpec spec = png_spec(out);
  spec.resume = true;
  auto sink = sink_create(spec);
  ASSERT_TRUE(sink.is_ok());
  auto done = (*sink)->open(make_layout(23, true), make_attributes("2024-06-01T12:00:00Z"));
  ASSERT_TRUE(done.is_ok()) << done.status().to_string();
  EXPECT_EQ(done.value(), 10);
  write_range(**sink, 10, 23, 6, true);  // different batching than the first run
  ASSERT_TRUE((*sink)->finish().is_ok());

  ASSERT_EQ(list_dir(out), list_dir(reference));
  for (const std::string& name : list_dir(reference)) {
    if (name == "manifest.json") continue;
    EXPECT_EQ(read_file(fs::path(out) / name), read_file(fs::path(reference) / name)) << name;
  }
  json a = read_json(fs::path(out) / "manifest.json");
  json b = read_json(fs::path(reference) / "manifest.json");
  EXPECT_EQ(a.at("created_at"), "2024-06-01T12:00:00Z");
  a.erase("created_at");
  b.erase("created_at");
  EXPECT_EQ(a, b);
}

TEST(ImageFolderSink, ResumeRefusesADifferentJob) {
  test::TempDir tmp;
  const std::string out = tmp.file("out");
  ASSERT_NO_FATAL_FAILURE(crash_run(png_spec(out), 12, 4, 4, false));
  OutputSpec spec = png_spec(out);
  spec.resume = true;
  auto sink = sink_create(spec);
  ASSERT_TRUE(sink.is_ok());
  DatasetAttributes attributes = make_attributes();
  attributes.seq_len = 60;
  auto done = (*sink)->open(make_layout(12, false), attributes);
  ASSERT_FALSE(done.is_ok());
  EXPECT_EQ(done.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(done.status().message().find("seq_len"), std::string::npos);

  // --resume with --overwrite replaces what cannot be continued.
  spec.overwrite = true;
  auto replaced = sink_create(spec);
  auto restarted = (*replaced)->open(make_layout(12, false), attributes);
  ASSERT_TRUE(restarted.is_ok()) << restarted.status().to_string();
  EXPECT_EQ(restarted.value(), 0);
}

TEST(ImageFolderSink, ResumeOfCompleteOutputHasNothingLeft) {
  test::TempDir tmp;
  const std::string out = tmp.file("out");
  ASSERT_NO_FATAL_FAILURE(run_complete(png_spec(out), 6, 4, true));
  const std::string index_before = read_file(fs::path(out) / "index.csv");
  OutputSpec spec = png_spec(out);
  spec.resume = true;
  auto sink = sink_create(spec);
  auto done = (*sink)->open(make_layout(6, true), make_attributes("2030-01-01T00:00:00Z"));
  ASSERT_TRUE(done.is_ok()) << done.status().to_string();
  EXPECT_EQ(done.value(), 6);
  EXPECT_TRUE((*sink)->finish().is_ok());
  EXPECT_EQ(read_file(fs::path(out) / "index.csv"), index_before);

  auto other = sink_create(spec);
  auto refused = (*other)->open(make_layout(7, true), make_attributes());
  EXPECT_EQ(refused.status().code(), Errc::kInvalidArgument);
}

TEST(ImageFolderSink, ResumeOfMissingFolderStartsFresh) {
  test::TempDir tmp;
  OutputSpec spec = png_spec(tmp.file("new"));
  spec.resume = true;
  ASSERT_NO_FATAL_FAILURE(run_complete(spec, 3, 3, false));
  EXPECT_TRUE(fs::exists(fs::path(spec.path) / "manifest.json"));
}

TEST(ImageFolderSink, RejectsOutOfOrderBatchesAndEarlyFinish) {
  test::TempDir tmp;
  auto sink = sink_create(png_spec(tmp.file("out")));
  ASSERT_TRUE((*sink)->open(make_layout(8, false), make_attributes()).is_ok());
  auto encoder = (*sink)->make_encoder();
  EXPECT_EQ((*sink)->write(make_batch(*encoder, 2, 2, false)).code(), Errc::kInvalidArgument);
  EXPECT_EQ((*sink)->write(make_batch(*encoder, 0, 2, true)).code(), Errc::kInvalidArgument);  // labels
  ASSERT_TRUE((*sink)->write(make_batch(*encoder, 0, 2, false)).is_ok());
  EXPECT_EQ((*sink)->write(make_batch(*encoder, 2, 7, false)).code(), Errc::kInvalidArgument);  // past total
  EXPECT_EQ((*sink)->finish().code(), Errc::kInvalidArgument);
  EXPECT_GT((*sink)->bytes_written(), 0u);
  EXPECT_NE((*sink)->describe().find("png"), std::string::npos);
  EXPECT_NE((*sink)->describe().find("1 file per image"), std::string::npos);
}

}  // namespace
}  // namespace kiln

#else
TEST(ImageFolderSink, SkippedWithoutLibspng) { GTEST_SKIP() << "built with KILN_JPEG=OFF"; }
#endif
