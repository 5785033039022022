#include "infer/infer_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "common/image_ops_util.h"
#include "kiln/image_ops.h"

namespace kiln::test {

const std::vector<std::string>& photo_paths() {
  static const std::vector<std::string> paths = {"/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
                                                 "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"};
  return paths;
}

std::vector<ImageBuffer> photos_decode() {
  std::vector<ImageBuffer> photos;
  DecodeOptions options;
  options.channels = 3;
  for (const auto& path : photo_paths()) {
    auto image = image_decode_file(path, options);
    EXPECT_TRUE(image.is_ok()) << image.status().to_string() << " (make deps installs the photos)";
    if (image.is_ok()) photos.push_back(std::move(image).value());
  }
  return photos;
}

PackagedModel packaged_model_require(const std::string& name) {
  auto model = packaged_model(name);
  EXPECT_TRUE(model.is_ok()) << model.status().to_string();
  return model.is_ok() ? model.value() : PackagedModel{};
}

std::vector<float> model_input_make(const PackagedModel& model, const std::vector<ImageBuffer>& images,
                                    std::vector<int64_t>* shape) {
  const int32_t w = model.input.width, h = model.input.height;
  const Layout layout = model_input_layout(model.input);
  const int64_t per_image = int64_t{3} * w * h;
  std::vector<float> data(per_image * images.size());
  std::vector<ImageView> in, out;
  for (size_t i = 0; i < images.size(); ++i) {
    in.push_back(images[i].view());
    out.push_back(image_view_packed(data.data() + i * per_image, w, h, 3, PixelType::kF32, layout));
  }
  const Status st = preprocess(model_preprocess_params(model.input), VarShapeBatch::wrap(in).view(),
                               VarShapeBatch::wrap(out).view(), cpu_exec());
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  const auto n = static_cast<int64_t>(images.size());
  *shape = layout == Layout::kCHW ? std::vector<int64_t>{n, 3, h, w} : std::vector<int64_t>{n, h, w, 3};
  return data;
}

void expect_rows_close(const Tensor& got, const Tensor& want, int64_t rows) {
  ASSERT_EQ(got.data.size(), want.data.size());
  const size_t dim = got.data.size() / static_cast<size_t>(rows);
  for (int64_t k = 0; k < rows; ++k) {
    const float* a = got.data.data() + k * dim;
    const float* b = want.data.data() + k * dim;
    double dot = 0, a_norm = 0, b_norm = 0, error = 0;
    for (size_t i = 0; i < dim; ++i) {
      dot += static_cast<double>(a[i]) * b[i];
      a_norm += static_cast<double>(a[i]) * a[i];
      b_norm += static_cast<double>(b[i]) * b[i];
      error += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    }
    EXPECT_GE(dot / std::sqrt(a_norm * b_norm), 0.999) << "row " << k;
    EXPECT_LE(std::sqrt(error / b_norm), 0.02) << "row " << k;
  }
}

std::unique_ptr<InferSession> session_open(const std::string& path, const InferOptions& options) {
  auto session = InferSession::open(path, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

std::string fixed_batch_embedder_path() {
  return (std::filesystem::path(model_dir()).parent_path() / "faceplugin" / "fr_feature.onnx").string();
}

bool cuda_device_present() {
  for (const auto& s : BackendRegistry::instance().statuses()) {
    if (s.kind == BackendKind::kCuda && s.available) return true;
  }
  return false;
}

InferOptions cpu_infer_options() {
  InferOptions options;
  options.mode = ExecMode::kCpu;
  options.threads = 2;
  options.warmup_runs = 0;
  return options;
}

}  // namespace kiln::test
