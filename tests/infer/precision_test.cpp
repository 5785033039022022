// The precision engine (include/kiln/precision.h) on a real model and real photos: fp16 weights halve the selfie
// model and keep its masks; int8 QDQ calibrated on portraits quantizes nearly every node and keeps the person's
// mask on them; broken bytes are refused before anything is built. (The CLI tests cover videos, the embedder and
// the written files: tests/cli/test_model_cli.py.)
#include <gtest/gtest.h>

#if KILN_HAS_ONNX
#include <algorithm>
#include <string>
#include <vector>

#include "core/file_read.h"
#include "infer/infer_test_util.h"
#include "kiln/precision.h"

namespace kiln {
namespace {

struct SelfieCase {
  ModelBytes model;
  std::vector<Tensor> photos;  // batch-1 inputs
};

SelfieCase selfie_case() {
  SelfieCase c;
  const PackagedModel model = test::packaged_model_require("selfie");
  auto bytes = file_read_all(model.file, int64_t{1} << 30);
  EXPECT_TRUE(bytes.is_ok()) << bytes.status().message();
  if (bytes.is_ok()) c.model = std::move(bytes).value();
  std::vector<int64_t> shape;
  const std::vector<float> input = test::model_input_make(model, test::photos_decode(), &shape);
  const int64_t per_item = static_cast<int64_t>(input.size()) / shape[0];
  for (int64_t i = 0; i < shape[0]; ++i) {
    Tensor t;
    t.shape = shape;
    t.shape[0] = 1;
    t.data.assign(input.begin() + i * per_item, input.begin() + (i + 1) * per_item);
    c.photos.push_back(std::move(t));
  }
  return c;
}

ModelCompareOptions quick_compare() {
  ModelCompareOptions o;
  o.threads = 1;
  o.seconds = 0.05;
  return o;
}

TEST(ModelPrecision, Fp16WeightsHalveTheSelfieModelAndKeepItsMasks) {
  const SelfieCase c = selfie_case();
  ASSERT_FALSE(c.model.empty());
  ModelFp16Report report;
  auto fp16 = model_fp16_convert(c.model, ModelFp16Options{}, &report);
  ASSERT_TRUE(fp16.is_ok()) << fp16.status().message();
  EXPECT_GT(report.converted, 50);
  EXPECT_LT(fp16.value().size(), c.model.size() * 6 / 10);
  auto compared = model_compare(c.model, fp16.value(), c.photos, quick_compare());
  ASSERT_TRUE(compared.is_ok()) << compared.status().message();
  const ModelCompareReport& r = compared.value();
  EXPECT_TRUE(r.mask);
  EXPECT_LT(r.max_abs_diff, 5e-3);  // float16 weights: about 3 significant digits
  EXPECT_GT(r.mask_iou_min, 0.99);
}

TEST(ModelPrecision, Int8CalibratedOnPortraitsKeepsThePersonsMask) {
  const SelfieCase c = selfie_case();
  ASSERT_FALSE(c.model.empty());
  ModelQuantizeOptions options;
  options.threads = 1;
  ModelQuantizeReport report;
  auto int8 = model_int8_quantize(c.model, c.photos, options, &report);
  ASSERT_TRUE(int8.is_ok()) << int8.status().message();
  EXPECT_EQ(report.calibration_items, static_cast<int64_t>(c.photos.size()));
  EXPECT_GT(report.weights, 50);             // every Conv's weights are int8
  EXPECT_GT(report.quantized_nodes, 100);    // ONNX Runtime runs these on integers (QLinearConv, QLinearAdd, ...)
  EXPECT_GT(report.quantize_nodes, 0);
  EXPECT_EQ(report.opset_to, 13);
  EXPECT_LT(int8.value().size(), c.model.size() * 7 / 10);
  auto compared = model_compare(c.model, int8.value(), c.photos, quick_compare());
  ASSERT_TRUE(compared.is_ok()) << compared.status().message();
  EXPECT_TRUE(compared.value().mask);
  // Measured 0.97 on these portraits (the person fills the frame); small people on video frames do worse.
  EXPECT_GT(compared.value().mask_iou_mean, 0.9);
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// selfie's head: ConvTranspose -> Add (bias) -> Sigmoid -> Identity ("mask"). In int8 its logits lose the precision
// that places the mask's edge.
TEST(ModelPrecision, TheOutputHeadStaysInFloatUnlessAsked) {
  const SelfieCase c = selfie_case();
  ASSERT_FALSE(c.model.empty());
  double mean_abs_diff[2] = {0, 0};
  for (const bool quantize_head : {false, true}) {
    ModelQuantizeOptions options;
    options.threads = 1;
    options.quantize_head = quantize_head;
    ModelQuantizeReport report;
    auto int8 = model_int8_quantize(c.model, c.photos, options, &report);
    ASSERT_TRUE(int8.is_ok()) << int8.status().message();
    EXPECT_EQ(report.head_nodes, quantize_head ? 0 : 4);
    EXPECT_EQ(has(report.float_op_types, "Sigmoid"), !quantize_head);  // else QLinearSigmoid runs it
    EXPECT_EQ(has(report.float_op_types, "Add"), !quantize_head);
    auto compared = model_compare(c.model, int8.value(), c.photos, quick_compare());
    ASSERT_TRUE(compared.is_ok()) << compared.status().message();
    mean_abs_diff[quantize_head ? 1 : 0] = compared.value().mean_abs_diff;
  }
  EXPECT_LT(mean_abs_diff[0], mean_abs_diff[1]) << "head in float " << mean_abs_diff[0] << ", in int8 "
                                                << mean_abs_diff[1];
}

TEST(ModelPrecision, BrokenBytesAreRefusedBeforeAnythingIsBuilt) {
  const SelfieCase c = selfie_case();
  ASSERT_FALSE(c.model.empty());
  const ModelBytes truncated(c.model.begin(), c.model.begin() + static_cast<int64_t>(c.model.size()) / 2);
  const Status status = model_bytes_check(truncated, "model half.onnx");
  EXPECT_EQ(status.code(), Errc::kInvalidArgument);
  EXPECT_EQ(status.message().rfind("model half.onnx", 0), 0u) << status.message();
  EXPECT_FALSE(model_bytes_check(ModelBytes{}, "empty").is_ok());
  EXPECT_TRUE(model_bytes_check(c.model, "selfie").is_ok());
  ModelFp16Report fp16_report;
  EXPECT_FALSE(model_fp16_convert(truncated, ModelFp16Options{}, &fp16_report).is_ok());
  ModelQuantizeReport int8_report;
  EXPECT_FALSE(model_int8_quantize(truncated, c.photos, ModelQuantizeOptions{}, &int8_report).is_ok());
  EXPECT_FALSE(model_int8_quantize(c.model, {}, ModelQuantizeOptions{}, &int8_report).is_ok())
      << "no calibration inputs";
}

}  // namespace
}  // namespace kiln
#else
TEST(ModelPrecision, NotBuilt) { GTEST_SKIP() << "built without libonnx (apt-get install libonnx-dev)"; }
#endif  // KILN_HAS_ONNX
