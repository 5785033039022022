// The packaged models on kiln's ONNX Runtime session against OpenCV DNN on the same real photographs. OpenCV reads
// the model as its npm package ships it (batch fixed at 1), so the batch rewrite is checked too; the selfie model
// exists only as kiln's conversion (checked against the TFJS graph itself in tests/tools).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/dnn.hpp>

#include "infer/infer_test_util.h"

namespace kiln {
namespace {

std::string original_file(const std::string& name) {
  std::ifstream in(std::filesystem::path(model_dir()) / "catalog.json");
  const auto catalog = nlohmann::json::parse(in);
  for (const auto& m : catalog.at("models")) {
    if (m.at("name") != name) continue;
    if (m.at("prepare") == "tfjs_to_onnx") return (std::filesystem::path(model_dir()) / m.at("file")).string();
    return (std::filesystem::path(model_dir()).parent_path() / m.at("package").get<std::string>() /
            m.at("sources")[0].get<std::string>()).string();
  }
  return "";
}

struct OpenCvCase {
  const char* model;
  float tolerance;  // max |difference| per output value
};

class InferVsOpenCv : public ::testing::TestWithParam<OpenCvCase> {};

TEST_P(InferVsOpenCv, OutputsMatchOnRealPhotos) {
  const PackagedModel model = test::packaged_model_require(GetParam().model);
  auto session = InferSession::open(model.file, test::cpu_infer_options());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  cv::dnn::Net net = cv::dnn::readNetFromONNX(original_file(model.name));
  std::vector<std::string> names;
  for (const auto& o : model.outputs) names.push_back(o.name);
  const auto photos = test::photos_decode();
  for (size_t i = 0; i < photos.size(); ++i) {
    std::vector<int64_t> shape;
    auto input = test::model_input_make(model, {photos[i]}, &shape);
    std::vector<Tensor> ours;
    ASSERT_TRUE(session.value()->run(input, shape, &ours).is_ok());
    const std::vector<int> dims(shape.begin(), shape.end());
    net.setInput(cv::Mat(static_cast<int>(dims.size()), dims.data(), CV_32F, input.data()));
    std::vector<cv::Mat> theirs;
    net.forward(theirs, names);
    ASSERT_EQ(theirs.size(), ours.size());
    for (size_t k = 0; k < ours.size(); ++k) {
      ASSERT_EQ(static_cast<int64_t>(theirs[k].total()), ours[k].elements()) << names[k];
      const float* ref = theirs[k].ptr<float>();
      float worst = 0;
      for (int64_t j = 0; j < ours[k].elements(); ++j) worst = std::max(worst, std::fabs(ours[k].data[j] - ref[j]));
      EXPECT_LE(worst, GetParam().tolerance) << model.name << " " << names[k] << " on " << test::photo_paths()[i];
    }
  }
}

// Tolerances: the selfie mask is a probability; detector logits and box offsets reach the hundreds, embeddings
// tens, so their float32 differences between two runtimes' kernels are larger in absolute terms.
INSTANTIATE_TEST_SUITE_P(Catalog, InferVsOpenCv,
                         ::testing::Values(OpenCvCase{"selfie", 1e-4f}, OpenCvCase{"blazeface-front", 2e-3f},
                                           OpenCvCase{"blazeface-back", 2e-3f}, OpenCvCase{"fr-detect", 1e-4f},
                                           OpenCvCase{"fr-embed", 1e-3f}),
                         [](const auto& info) {
                           std::string name = info.param.model;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace kiln
