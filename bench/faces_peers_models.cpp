#include "faces_peers_models.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <opencv2/imgproc.hpp>

namespace kiln::bench {

struct FaceModelsOnly {
  std::unique_ptr<InferSession> detector;
  std::unique_ptr<InferSession> embedder;
  std::vector<int64_t> detector_item;  // one item's dims after the batch dim
  std::vector<int64_t> embedder_item;
  std::vector<std::vector<float>> photo_batches;  // the detector's input, one vector per batch of photos
  std::vector<std::vector<float>> face_chunks;    // the embedder's input, one vector per chunk of faces
};

namespace {

void fail_if(const Status& status, const char* what) {
  if (status.is_ok()) return;
  std::fprintf(stderr, "faces_peers: %s: %s\n", what, status.message().c_str());
  std::exit(1);
}

std::unique_ptr<InferSession> session_open(const PackagedModel& model, int threads, int64_t batch) {
  InferOptions options;  // as FaceAnalyzer opens its sessions
  options.mode = ExecMode::kCpu;
  options.threads = threads;
  options.spin_wait = false;
  options.warmup_batch = std::min<int64_t>(batch, 8);
  auto session = InferSession::open(model.file, options);
  fail_if(session.status(), model.file.c_str());
  return std::move(session).value();
}

std::vector<int64_t> item_dims(const ModelInput& input) {
  if (input.layout == "nhwc") return {input.height, input.width, 3};
  return {3, input.height, input.width};
}

// Appends one RGB u8 image of the input's size as the model wants it: (x * scale - mean) / std, NCHW or NHWC.
void append_tensor(const cv::Mat& rgb, const ModelInput& input, std::vector<float>* out) {
  const float mean = input.mean.empty() ? 0.0f : input.mean[0];
  const float std = input.std.empty() ? 1.0f : input.std[0];
  const size_t plane = static_cast<size_t>(rgb.rows) * rgb.cols;
  const size_t first = out->size();
  out->resize(first + 3 * plane);
  float* dst = out->data() + first;
  for (int y = 0; y < rgb.rows; ++y) {
    const uint8_t* row = rgb.ptr<uint8_t>(y);
    for (int x = 0; x < rgb.cols; ++x) {
      for (int c = 0; c < 3; ++c) {
        const int from = input.bgr ? 2 - c : c;
        const float v = (static_cast<float>(row[3 * x + from]) * input.scale - mean) / std;
        const size_t at = static_cast<size_t>(y) * rgb.cols + x;
        if (input.layout == "nhwc") dst[3 * at + c] = v;
        else dst[c * plane + at] = v;
      }
    }
  }
}

cv::Mat letterboxed(const cv::Mat& rgb, int size) {
  const double scale = std::min(static_cast<double>(size) / rgb.cols, static_cast<double>(size) / rgb.rows);
  const int w = std::clamp(static_cast<int>(std::lround(rgb.cols * scale)), 1, size);
  const int h = std::clamp(static_cast<int>(std::lround(rgb.rows * scale)), 1, size);
  cv::Mat canvas(size, size, CV_8UC3, cv::Scalar::all(0));
  cv::resize(rgb, canvas(cv::Rect((size - w) / 2, (size - h) / 2, w, h)), cv::Size(w, h), 0, 0, cv::INTER_LINEAR);
  return canvas;
}

cv::Mat face_crop(const cv::Mat& rgb, const FaceDetection& d, int size) {
  const cv::Rect box = cv::Rect(static_cast<int>(d.box[0]), static_cast<int>(d.box[1]),
                                std::max(1, static_cast<int>(d.box[2])), std::max(1, static_cast<int>(d.box[3]))) &
                       cv::Rect(0, 0, rgb.cols, rgb.rows);
  cv::Mat out;
  if (box.area() == 0) return cv::Mat(size, size, CV_8UC3, cv::Scalar::all(0));
  cv::resize(rgb(box), out, cv::Size(size, size), 0, 0, cv::INTER_LINEAR);
  return out;
}

}  // namespace

std::shared_ptr<FaceModelsOnly> face_models_only_open(const PackagedModel& detector, const PackagedModel& embedder,
                                                      const std::vector<cv::Mat>& rgb,
                                                      const std::vector<std::vector<Face>>& faces, int threads,
                                                      int64_t batch) {
  auto m = std::make_shared<FaceModelsOnly>();
  m->detector = session_open(detector, threads, batch);
  m->embedder = session_open(embedder, threads, batch);
  m->detector_item = item_dims(detector.input);
  m->embedder_item = item_dims(embedder.input);
  const auto b = static_cast<size_t>(batch);
  for (size_t first = 0; first < rgb.size(); first += b) {
    const size_t end = std::min(rgb.size(), first + b);
    std::vector<float> photos;
    std::vector<cv::Mat> crops;
    for (size_t i = first; i < end; ++i) {
      append_tensor(letterboxed(rgb[i], detector.input.width), detector.input, &photos);
      for (const Face& f : faces[i]) crops.push_back(face_crop(rgb[i], f.detection, embedder.input.width));
    }
    m->photo_batches.push_back(std::move(photos));
    for (size_t k = 0; k < crops.size(); k += b) {
      std::vector<float> chunk;
      for (size_t j = k; j < std::min(crops.size(), k + b); ++j) append_tensor(crops[j], embedder.input, &chunk);
      m->face_chunks.push_back(std::move(chunk));
    }
  }
  return m;
}

int64_t face_models_only_pass(FaceModelsOnly& m) {
  std::vector<Tensor> outputs;
  const auto run = [&](InferSession& session, const std::vector<float>& input, const std::vector<int64_t>& item) {
    int64_t per = 1;
    for (const int64_t d : item) per *= d;
    std::vector<int64_t> shape{static_cast<int64_t>(input.size()) / per};
    shape.insert(shape.end(), item.begin(), item.end());
    fail_if(session.run(input, shape, &outputs), "models only");
    return shape[0];
  };
  int64_t faces = 0;
  for (const auto& photos : m.photo_batches) run(*m.detector, photos, m.detector_item);
  for (const auto& chunk : m.face_chunks) faces += run(*m.embedder, chunk, m.embedder_item);
  return faces;
}

int64_t face_models_concurrent_pass(const std::vector<std::shared_ptr<FaceModelsOnly>>& copies) {
  std::vector<int64_t> faces(copies.size(), 0);
  std::vector<std::thread> threads;
  for (size_t k = 1; k < copies.size(); ++k) {
    threads.emplace_back([&, k] { faces[k] = face_models_only_pass(*copies[k]); });
  }
  faces[0] = face_models_only_pass(*copies[0]);
  for (std::thread& t : threads) t.join();
  int64_t total = 0;
  for (const int64_t f : faces) total += f;
  return total;
}

}  // namespace kiln::bench
