// The render job end to end through the library: output equals direct rendering, bad input writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/render_helpers.h"
#include "common/test_util.h"
#include "apps/render/render_job.h"

namespace kiln {
namespace {

TEST(RenderJob, NpyOutputEqualsDirectRendering) {
  test::TempDir dir;
  RenderJobConfig config;
  config.demo = true;
  config.demo_points = 140;
  config.render.width = 64;
  config.render.height = 32;
  config.windows.seq_len = 20;
  config.windows.stride = 2;
  config.threads = 2;
  config.batch_size = 9;
  config.output.path = dir.file("out.npy");
  config.output.format = OutputFormat::kNpy;
  auto summary = render_job_run(config);
  ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
  EXPECT_EQ(summary->images, 61);
  EXPECT_FALSE(summary->backend.empty());  // cpu here; a GPU where there is one (same bytes either way)

  std::ifstream in(dir.file("out.npy"), std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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
  RenderJobConfig config;
  config.demo = true;
  config.demo_points = 300;
  config.render.width = 32;
  config.render.height = 16;
  config.batch_size = 50;
  config.output.path = dir.file("o.h5");
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

}  // namespace
}  // namespace kiln
