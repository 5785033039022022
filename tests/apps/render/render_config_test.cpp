// Config layering: predecessor config.yaml < environment (< flags, tested through the CLI).
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "common/test_util.h"
#include "kiln/apps/render.h"

namespace kiln {
namespace {

const char* kPredecessorConfig = R"(data:
  symbol: BTCUSDT
  interval: 1m
  start_date: '2020-01'
  end_date: '2020-02'
image:
  seq_len: 100
  line_width: 3
  batch_size: 10000
  resolution:
    width: 800
    height: 500
    dpi: 100
  rendering:
    mode: cpu
    gpu_batch_size: 5000
    fallback_on_error: false
  storage:
    format: hdf5
    mode: batch
    images_per_file: 50000
  colors: {bullish: 0.2, bearish: 0.0}
paths:
  raw_data: data/raw
pipeline:
  num_workers: -1
)";

TEST(RenderConfig, ReadsThePredecessorConfigUnchanged) {
  test::TempDir dir;
  test::write_text_file(dir.file("config.yaml"), kPredecessorConfig);
  RenderJobConfig config;
  std::vector<std::string> ignored;
  ASSERT_TRUE(render_config_apply_yaml(dir.file("config.yaml"), &config, &ignored).is_ok());
  EXPECT_EQ(config.windows.seq_len, 100);
  EXPECT_EQ(config.render.width, 800);
  EXPECT_EQ(config.dpi, 100);
  EXPECT_EQ(config.exec.mode, ExecMode::kCpu);
  EXPECT_EQ(config.exec.batch_size, 5000);  // rendering.gpu_batch_size wins over image.batch_size
  EXPECT_FALSE(config.exec.fallback_on_error);
  EXPECT_EQ(config.output.images_per_file, 50000);
  EXPECT_EQ(config.render.ink_bullish, 51);
  EXPECT_EQ(ignored, (std::vector<std::string>{"data", "paths", "pipeline"}));
}

TEST(RenderConfig, BadValuesNameTheKey) {
  test::TempDir dir;
  test::write_text_file(dir.file("c.yaml"), "image:\n  seq_len: many\n");
  RenderJobConfig config;
  const Status s = render_config_apply_yaml(dir.file("c.yaml"), &config, nullptr);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find("image.seq_len"), std::string::npos) << s.message();
  test::write_text_file(dir.file("z.yaml"), "image:\n  storage: {format: zarr}\n");
  EXPECT_EQ(render_config_apply_yaml(dir.file("z.yaml"), &config, nullptr).code(), Errc::kUnsupportedFormat);
  EXPECT_EQ(render_config_apply_yaml(dir.file("missing.yaml"), &config, nullptr).code(), Errc::kIoError);
}

// Each of these aborted kiln with an uncaught yaml-cpp exception, or was accepted silently (image: [1, 2]).
TEST(RenderConfig, WrongShapesAreErrorsNamingTheSection) {
  test::TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"image: 5\n", "image:"},
      {"image: [1, 2]\n", "image:"},
      {"image: {resolution: 5}\n", "image.resolution"},
      {"image: {colors: 7}\n", "image.colors"},
      {"image: {storage: abc}\n", "image.storage"},
      {"image: {rendering: [cpu]}\n", "image.rendering"},
      {"image: {resolution: {width: [1, 2]}}\n", "image.resolution.width"},
      {"image: {width: {a: 1}}\n", "image.width"},
      {"image: {width: [[1]]}\n", "image.width"},
      {"? [a]\n: 1\n", "a key must be a name"},
      {"image: {? {a: 1} : 2}\n", "a key must be a name"},
  };
  for (const auto& [text, named] : cases) {
    test::write_text_file(dir.file("c.yaml"), text);
    RenderJobConfig config;
    const Status s = render_config_apply_yaml(dir.file("c.yaml"), &config, nullptr);
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << text;
    EXPECT_NE(s.message().find(named), std::string::npos) << text << " -> " << s.message();
  }
}

TEST(RenderConfig, DeclaredSettingsByTheirNames) {
  test::TempDir dir;
  test::write_text_file(dir.file("c.yaml"),
                        "image:\n  stride: 5\n  style: ohlc\n  ink: 40\n  ink_bullish: 90\n  label_threshold: 0.25\n"
                        "  threads: 3\n  format: npy\n  colour: red\n");
  RenderJobConfig config;
  std::vector<std::string> ignored;
  ASSERT_TRUE(render_config_apply_yaml(dir.file("c.yaml"), &config, &ignored).is_ok());
  EXPECT_EQ(config.windows.stride, 5);
  EXPECT_EQ(config.render.style, ChartStyle::kOhlc);
  EXPECT_EQ(config.render.ink, 40);
  EXPECT_EQ(config.render.ink_bearish, 40);
  EXPECT_EQ(config.render.ink_bullish, 90);
  EXPECT_DOUBLE_EQ(config.windows.label_threshold, 0.25);
  EXPECT_EQ(config.exec.threads, 3);
  EXPECT_EQ(config.output.format, OutputFormat::kNpy);
  EXPECT_EQ(ignored, (std::vector<std::string>{"image.colour"}));
  test::write_text_file(dir.file("bad.yaml"), "image:\n  jpeg_quality: 101\n");
  const Status s = render_config_apply_yaml(dir.file("bad.yaml"), &config, nullptr);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find("image.jpeg_quality"), std::string::npos) << s.message();
}

EnvLookup lookup_in(const std::map<std::string, std::string>* env) {
  return [env](const char* name) -> const char* {
    auto it = env->find(name);
    return it == env->end() ? nullptr : it->second.c_str();
  };
}

TEST(RenderConfig, EnvironmentOverridesTheFile) {
  test::TempDir dir;
  test::write_text_file(dir.file("config.yaml"), kPredecessorConfig);
  RenderJobConfig config;
  ASSERT_TRUE(render_config_apply_yaml(dir.file("config.yaml"), &config, nullptr).is_ok());
  std::map<std::string, std::string> env{{"GPU_BACKEND", "auto"}, {"GPU_BATCH_SIZE", "64"}, {"KILN_THREADS", "3"}};
  ExecSettings& exec = config.exec;
  ASSERT_TRUE(exec_settings_apply_env(&exec, OpKind::kRender, lookup_in(&env)).is_ok());
  EXPECT_EQ(exec.mode, ExecMode::kAuto);
  EXPECT_EQ(exec.batch_size, 64);
  EXPECT_EQ(exec.threads, 3);
  env["GPU_BACKEND"] = "cpu";
  ASSERT_TRUE(exec_settings_apply_env(&exec, OpKind::kRender, lookup_in(&env)).is_ok());
  EXPECT_EQ(exec.mode, ExecMode::kCpu);
  env["GPU_BATCH_SIZE"] = "-4";
  EXPECT_EQ(exec_settings_apply_env(&exec, OpKind::kRender, lookup_in(&env)).code(), Errc::kInvalidArgument);
  env["GPU_BATCH_SIZE"] = "8";
  env["GPU_BACKEND"] = "tpu";
  EXPECT_EQ(exec_settings_apply_env(&exec, OpKind::kRender, lookup_in(&env)).code(), Errc::kInvalidArgument);
}

TEST(RenderConfig, BackendChoiceAndPerOperationSwitches) {
  std::map<std::string, std::string> env;
  ExecSettings exec;
  std::vector<std::string> notes;
  env = {{"GPU_BACKEND", "opencl"}};
  ASSERT_TRUE(exec_settings_apply_env(&exec, OpKind::kRender, lookup_in(&env), &notes).is_ok());
  EXPECT_EQ(exec.gpu_only, BackendKind::kOpenCL);
  env = {{"GPU_BACKEND", "rocm"}};
  ASSERT_TRUE(exec_settings_apply_env(&exec, OpKind::kRender, lookup_in(&env), &notes).is_ok());
  EXPECT_EQ(exec.gpu_only, BackendKind::kOpenCL);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("OpenCL"), std::string::npos);

  exec = ExecSettings();
  env = {{"ALL_GPU", "true"}, {"RENDER_GPU", "false"}};  // the per-operation switch wins
  ASSERT_TRUE(exec_settings_apply_env(&exec, OpKind::kRender, lookup_in(&env)).is_ok());
  EXPECT_EQ(exec.mode, ExecMode::kCpu);
  env = {{"ALL_GPU", "1"}};
  ASSERT_TRUE(exec_settings_apply_env(&exec, OpKind::kRender, lookup_in(&env)).is_ok());
  EXPECT_EQ(exec.mode, ExecMode::kAuto);
  env = {{"RENDER_GPU", "maybe"}};
  EXPECT_EQ(exec_settings_apply_env(&exec, OpKind::kRender, lookup_in(&env)).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
