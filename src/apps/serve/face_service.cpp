#include "apps/serve/face_service.h"

#include <chrono>
#include <mutex>

#include "kiln/codec.h"

namespace kiln::serve {

namespace {

int64_t face_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool face_timeout(const Status& status) {
  return status.code() == Errc::kCancelled && status.message().find("timed out") != std::string::npos;
}

}  // namespace

struct FaceService::Call {
  FaceCallResult result;
  std::vector<FaceBatchImage> inputs;
  std::atomic<int64_t> remaining{0};
  std::atomic<bool> finished{false};
  FaceCallDone done;

  void succeed() {
    if (!finished.exchange(true)) done(std::move(result));
  }
  // Results being written by workers are left alone: the refusal carries only its status.
  void fail(int http_status, std::string error) {
    if (finished.exchange(true)) return;
    FaceCallResult refusal;
    refusal.http_status = http_status;
    refusal.error = std::move(error);
    done(std::move(refusal));
  }
};

FaceService::FaceService(const FaceServiceConfig& config, ServeMetrics* metrics, LogFn log) : m_metrics(metrics) {
  for (int32_t i = 0; i < std::max(1, config.instances); ++i) {
    auto analyzer = FaceAnalyzer::open(config.face, config.exec, log);
    if (!analyzer.is_ok()) {
      m_error = "the face models failed to load: " + analyzer.status().message();
      m_analyzers.clear();
      return;
    }
    m_analyzers.push_back(std::move(analyzer).value());
  }
  m_report = m_analyzers.front()->report();
  ServeMetrics* const observed = m_metrics;
  auto on_complete = [observed](Job& job, const BatchResponse& response) {
    if (!response.status.is_ok()) {
      const bool timeout = face_timeout(response.status);
      observed->rejected_observe("faces", timeout ? "timeout" : "failed");
      job.call->fail(timeout ? 504 : 500, timeout ? "the request waited in the queue past its timeout"
                                                  : response.status.message());
      return;
    }
    FaceImageResult& image = job.call->result.images[job.index];
    image.batch_size = response.batch_size;
    image.queue_ns = response.queue_ns;
    if (job.call->remaining.fetch_sub(1) == 1) job.call->succeed();
  };
  auto batcher = DynamicBatcher<Job>::create(config.batcher, nullptr, on_complete);
  if (!batcher.is_ok()) {
    m_error = "face batcher: " + batcher.status().message();
    return;
  }
  m_batcher = std::move(batcher).value();
  for (auto& analyzer : m_analyzers) m_workers.emplace_back([this, a = analyzer.get()] { worker_loop(a); });
}

FaceService::~FaceService() {
  close();
  for (auto& worker : m_workers) worker.join();
}

void FaceService::close() {
  if (m_batcher) m_batcher->close();
}

bool FaceService::gpu_used() const { return ready() && m_report.detection.rfind("cpu", 0) != 0; }

void FaceService::submit(std::vector<FaceBatchImage> images, Scheduling scheduling, FaceCallDone done) {
  auto call = std::make_shared<Call>();
  call->done = std::move(done);
  if (!ready()) return call->fail(503, m_error);
  call->result.images.resize(images.size());
  std::vector<size_t> to_run;
  for (size_t i = 0; i < images.size(); ++i) {
    FaceBatchImage& image = images[i];
    if (image.error.empty() && image_format_sniff(image.bytes.data(), image.bytes.size()) == ImageFormat::kUnknown) {
      image.error = "unsupported image format: " + image_content_describe(image.bytes.data(), image.bytes.size());
    }
    if (!image.error.empty()) call->result.images[i].error = image.error;
    else to_run.push_back(i);
  }
  call->inputs = std::move(images);
  call->remaining.store(static_cast<int64_t>(to_run.size()) + 1);  // +1 until every image is queued
  for (const size_t i : to_run) {
    const size_t bytes = call->inputs[i].bytes.size();
    const Status st = m_batcher->enqueue(Job{call, i}, scheduling.priority, scheduling.timeout_us, bytes);
    if (!st.is_ok()) {
      const bool full = st.message().find("full") != std::string::npos;
      m_metrics->rejected_observe("faces", full ? "queue_full" : "closed");
      return call->fail(full ? 429 : 503, full ? "the face queue is full: retry later" : st.message());
    }
  }
  if (call->remaining.fetch_sub(1) == 1) call->succeed();
}

void FaceService::worker_loop(FaceAnalyzer* analyzer) {
  for (;;) {
    auto batch = m_batcher->next_batch();
    if (!batch.is_ok()) return;  // closed and drained
    if (batch.value().empty()) continue;
    batch_run(analyzer, batch.value());
  }
}

void FaceService::batch_run(FaceAnalyzer* analyzer, Batch<Job>& batch) {
  const int64_t start = face_now_ns();
  std::vector<ImageBuffer> pixels(batch.size());
  std::vector<ImageView> views;
  std::vector<size_t> decoded;
  DecodeOptions options;
  options.channels = 3;
  for (size_t k = 0; k < batch.size(); ++k) {
    Job& job = batch.items[k].request;
    std::vector<uint8_t>& bytes = job.call->inputs[job.index].bytes;
    auto image = image_decode(bytes.data(), bytes.size(), options);
    bytes = {};
    if (!image.is_ok()) {
      job.call->result.images[job.index].error = image.status().message();
      continue;
    }
    pixels[k] = std::move(image).value();
    views.push_back(pixels[k].view());
    decoded.push_back(k);
  }
  if (!views.empty()) {
    const VarShapeBatch images = VarShapeBatch::wrap(std::move(views));
    std::vector<std::vector<Face>> faces;
    const Status st = analyzer->analyze(images.view(), &faces);
    for (size_t j = 0; j < decoded.size(); ++j) {
      const Job& job = batch.items[decoded[j]].request;
      FaceImageResult& result = job.call->result.images[job.index];
      if (st.is_ok()) result.faces = std::move(faces[j]);
      else result.error = "analysis failed: " + st.message();
    }
  }
  const int64_t compute_ns = face_now_ns() - start;
  std::vector<double> queue_seconds;
  for (const auto& item : batch.items) queue_seconds.push_back(static_cast<double>(item.queue_ns) * 1e-9);
  m_metrics->batch_observe("faces", static_cast<int32_t>(batch.size()), static_cast<double>(compute_ns) * 1e-9,
                           queue_seconds);
  m_batcher->complete(batch, compute_ns);
}

}  // namespace kiln::serve
