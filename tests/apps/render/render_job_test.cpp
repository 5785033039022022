// The render job end to end through the library: output equals direct rendering, bad input writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/render_helpers.h"
#include "common/test_util.h"
#include "kiln/apps/render.h"

namespace kiln {
namespace {

// A job on the built-in demo series of `points` rows, rendering width x height charts (width 0: the job's
// default), written to `output`.
RenderJobConfig demo_job(int64_t points, int32_t width, int32_t height, const std::string& output) {
  RenderJobConfig config;
  config.demo = true;
  config.demo_points = points;
  config.render.width = width;
  config.render.height = height;
  config.output.path = output;
  return config;
}

TEST(RenderJob, NpyOutputEqualsDirectRendering) {
  test::TempDir dir;
  RenderJobConfig config = demo_job(140, 64, 32, dir.file("out.npy"));
  config.windows.seq_len = 20;
  config.windows.stride = 2;
  config.exec.threads = 2;
  config.exec.batch_size = 9;
  config.output.format = OutputFormat::kNpy;
  auto summary = render_job_run(config);
  ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
  EXPECT_EQ(summary->images, 61);
  EXPECT_FALSE(summary->backend.empty());  // cpu here; a GPU where there is one (same bytes either way)

  const std::vector<uint8_t> bytes = test::read_file_bytes(dir.file("out.npy"));
  const size_t image_bytes = 64 * 32;
  ASSERT_GE(bytes.size(), 61 * image_bytes);
  const std::vector<uint8_t> data(bytes.end() - static_cast<std::ptrdiff_t>(61 * image_bytes), bytes.end());

  const Series series = series_demo(140);
  std::vector<int64_t> starts;
  for (int64_t s = 0; s + 20 <= 140; s += 2) starts.push_back(s);
  const auto expected = test::render_series(series.values, 4, starts, 20, config.render, 61, 1);
  EXPECT_EQ(data, expected);
}

TEST(RenderJob, NoUsableWindowIsAnErrorAndWritesNothing) {
  test::TempDir dir;
  test::write_text_file(dir.file("p.csv"), "Close\n1\nnan\n3\nnan\n5\n");
  RenderJobConfig config;
  config.input.path = dir.file("p.csv");
  config.windows.seq_len = 2;
  config.output.path = dir.file("out.h5");
  auto summary = render_job_run(config);
  EXPECT_EQ(summary.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(summary.status().message().find("no window"), std::string::npos);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(RenderJob, ProgressReachesTheTotal) {
  test::TempDir dir;
  RenderJobConfig config = demo_job(300, 32, 16, dir.file("o.h5"));
  config.exec.batch_size = 50;
  int64_t last = 0;
  int calls = 0;
  auto summary = render_job_run(config, [&](const RenderProgress& p) {
    EXPECT_GT(p.done, last);
    last = p.done;
    ++calls;
  });
  ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
  EXPECT_EQ(last, 201);
  EXPECT_EQ(calls, 5);
}

// Defaults that depend on other settings: OHLC charts are 4 pixels per bar wide unless a width is set; the format
// follows the output's name unless set.
TEST(RenderJob, OhlcWidthAndFormatFollowTheOtherSettings) {
  test::TempDir dir;
  RenderJobConfig config = demo_job(60, 0, 16, dir.file("bars.npy"));
  config.windows.seq_len = 10;
  config.render.style = ChartStyle::kOhlc;
  auto summary = render_job_run(config);
  ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
  std::ifstream in(dir.file("bars.npy"), std::ios::binary);
  std::string header(128, '\0');
  in.read(header.data(), 128);
  EXPECT_NE(header.find("'shape': (51, 16, 40)"), std::string::npos) << header;  // npy, 4 x seq_len wide
  config.render.width = 24;
  config.output.path = dir.file("bars.h5");
  summary = render_job_run(config);
  ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
  EXPECT_NE(summary->output.find("bars.h5"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir.file("bars.h5")));
}

TEST(RenderJob, InputsAndResumeOverwriteAreChecked) {
  test::TempDir dir;
  RenderJobConfig config;
  config.output.path = dir.file("o.h5");
  EXPECT_EQ(render_job_run(config).status().code(), Errc::kInvalidArgument);  // no input
  config.demo = true;
  config.output.resume = config.output.overwrite = true;
  EXPECT_EQ(render_job_run(config).status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
