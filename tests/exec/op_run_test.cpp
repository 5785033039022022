// op_run's checks before any backend sees a call, and the environment switches that place image ops.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kiln/image_ops.h"
#include "kiln/ops/render.h"
#include "exec/exec_env.h"

namespace kiln {
namespace {

EnvLookup lookup_from(const std::map<std::string, std::string>& env) {
  return [env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
}

struct Placed {
  ExecMode mode = ExecMode::kAuto;
  std::optional<BackendKind> only;
  std::vector<std::string> notes;
};

Placed apply(OpKind op, const std::map<std::string, std::string>& env, ExecMode start = ExecMode::kAuto) {
  Placed p;
  p.mode = start;
  const Status status = exec_env_apply(op, &p.mode, &p.only, &p.notes, lookup_from(env));
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return p;
}

TEST(ExecEnv, PerOperationSwitchesGovernTheirOps) {
  EXPECT_EQ(apply(OpKind::kResize, {{"IMAGE_PROCESSING_GPU", "false"}}).mode, ExecMode::kCpu);
  EXPECT_EQ(apply(OpKind::kPreprocess, {{"IMAGE_PROCESSING_GPU", "0"}}).mode, ExecMode::kCpu);
  EXPECT_EQ(apply(OpKind::kMask, {{"IMAGE_PROCESSING_GPU", "off"}}).mode, ExecMode::kCpu);
  EXPECT_EQ(apply(OpKind::kQuality, {{"IMAGE_PROCESSING_GPU", "false"}}).mode, ExecMode::kAuto);
  EXPECT_EQ(apply(OpKind::kQuality, {{"QUALITY_CHECKS_GPU", "false"}}).mode, ExecMode::kCpu);
  EXPECT_EQ(apply(OpKind::kEnhance, {{"IMAGE_ENHANCEMENT_GPU", "no"}}).mode, ExecMode::kCpu);
  EXPECT_EQ(apply(OpKind::kRender, {{"IMAGE_ENHANCEMENT_GPU", "no"}}).mode, ExecMode::kAuto);
}

TEST(ExecEnv, TheOpSwitchWinsOverAllGpu) {
  EXPECT_EQ(apply(OpKind::kQuality, {{"ALL_GPU", "false"}}).mode, ExecMode::kCpu);
  EXPECT_EQ(apply(OpKind::kQuality, {{"ALL_GPU", "false"}, {"QUALITY_CHECKS_GPU", "true"}}).mode, ExecMode::kAuto);
  EXPECT_EQ(apply(OpKind::kResize, {{"ALL_GPU", "true"}, {"IMAGE_PROCESSING_GPU", "false"}}).mode, ExecMode::kCpu);
  // true lets an op use a GPU even when the configuration said cpu.
  EXPECT_EQ(apply(OpKind::kResize, {{"ALL_GPU", "1"}}, ExecMode::kCpu).mode, ExecMode::kAuto);
}

TEST(ExecEnv, GpuBackendChoosesTheBackend) {
  EXPECT_EQ(apply(OpKind::kResize, {{"GPU_BACKEND", "cpu"}}).mode, ExecMode::kCpu);
  EXPECT_EQ(apply(OpKind::kResize, {{"GPU_BACKEND", "CUDA"}}).only, BackendKind::kCuda);
  const Placed rocm = apply(OpKind::kResize, {{"GPU_BACKEND", "rocm"}});
  EXPECT_EQ(rocm.only, BackendKind::kOpenCL);
  ASSERT_EQ(rocm.notes.size(), 1U);
  EXPECT_NE(rocm.notes[0].find("ROCm"), std::string::npos);
}

TEST(ExecEnv, BadValuesAreInvalidArguments) {
  ExecMode mode = ExecMode::kAuto;
  std::optional<BackendKind> only;
  EXPECT_EQ(exec_env_apply(OpKind::kResize, &mode, &only, nullptr, lookup_from({{"GPU_BACKEND", "metal"}})).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(exec_env_apply(OpKind::kQuality, &mode, &only, nullptr, lookup_from({{"QUALITY_CHECKS_GPU", "maybe"}}))
                .code(),
            Errc::kInvalidArgument);
}

TEST(OpRun, ChecksBatchesBeforeAnyBackend) {
  std::vector<uint8_t> pixels(16 * 16 * 3);
  const ImageView good = image_view_packed(pixels.data(), 16, 16, 3, PixelType::kU8);
  ImageView empty = good;
  empty.width = 0;
  ImageView no_data = good;
  no_data.data = nullptr;
  ImageView short_rows = good;
  short_rows.row_stride = 10;
  ColorParams params;
  for (const ImageView& bad : {empty, no_data, short_rows}) {
    const VarShapeBatch in = VarShapeBatch::wrap({bad});
    const VarShapeBatch out = VarShapeBatch::wrap({good});
    EXPECT_EQ(color_convert(params, in.view(), out.view()).code(), Errc::kInvalidArgument);
    EXPECT_EQ(color_convert(params, out.view(), in.view()).code(), Errc::kInvalidArgument);
  }
  const VarShapeBatch in = VarShapeBatch::wrap({good});
  EXPECT_EQ(op_run(OpCall{OpKind::kColor, nullptr, in.view(), in.view(), nullptr}).code(), Errc::kInvalidArgument);
  const RenderParams render;  // valid settings; u8 images are no price windows
  EXPECT_EQ(op_run(OpCall{OpKind::kRender, &render, in.view(), in.view(), nullptr}).code(), Errc::kInvalidArgument);
}

TEST(OpRun, DeviceBatchesNeverRunOnTheCpu) {
  std::vector<uint8_t> pixels(8 * 8 * 3);
  const VarShapeBatch in = VarShapeBatch::wrap({image_view_packed(pixels.data(), 8, 8, 3, PixelType::kU8)},
                                               MemorySpace::kDevice);
  ColorParams params;
  ExecOptions exec;
  exec.mode = ExecMode::kCpu;
  const Status status = color_convert(params, in.view(), in.view(), exec);
  EXPECT_EQ(status.code(), Errc::kInvalidArgument) << status.to_string();
}

}  // namespace
}  // namespace kiln
