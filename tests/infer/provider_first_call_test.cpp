// A process whose first ONNX Runtime call appends a GPU provider: creating the provider's options loads its library,
// which logs through ONNX Runtime's default logger, and that logger exists only once the environment does. Before the
// fix every `kiln ... --mode gpu` command failed there with "Attempt to use DefaultLogger but none has been
// registered", while the tests passed because an earlier test in their process had made the environment. So the
// check runs in a child process of its own (this binary, filtered to the disabled child test). It runs anywhere:
// without a GPU the append fails for a reason of its own (no CUDA driver, a runtime built without the provider).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <unistd.h>

#include "common/test_util.h"
#include "infer/providers.h"

namespace kiln {
namespace {

TEST(ProviderFirstCall, DISABLED_Child) {
  Ort::SessionOptions session_options;
  InferOptions options;
  BackendOptions backend;
  for (const InferProvider provider : {InferProvider::kCuda, InferProvider::kTensorRt}) {
    const Status st = provider_append(session_options, provider, options, backend, nullptr);
    std::printf("provider %s: %s\n", infer_provider_name(provider), st.is_ok() ? "appended" : st.message().c_str());
  }
}

TEST(ProviderFirstCall, InANewProcessAGpuProviderLoadsWithOnnxRuntimesLogger) {
  const test::CommandResult child = test::run_command(
      "/proc/" + std::to_string(::getpid()) + "/exe --gtest_also_run_disabled_tests "
      "--gtest_filter=ProviderFirstCall.DISABLED_Child");
  ASSERT_EQ(child.exit_code, 0) << child.output;
  ASSERT_NE(child.output.find("provider cuda: "), std::string::npos) << child.output;
  ASSERT_NE(child.output.find("provider tensorrt: "), std::string::npos) << child.output;
  EXPECT_EQ(child.output.find("DefaultLogger"), std::string::npos) << child.output;
}

}  // namespace
}  // namespace kiln
