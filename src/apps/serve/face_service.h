// The face model behind kiln serve: concurrent requests' images go through one DynamicBatcher to `instances` worker
// threads, each owning a FaceAnalyzer (not thread-safe: one per thread), which decode (kiln's codec) and analyze a
// batch at a time. A request's images are answered together once the last is done.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/serve/http_types.h"
#include "apps/serve/serve_metrics.h"
#include "apps/serve/serve_parse.h"
#include "kiln/apps/faces.h"
#include "pipeline/batcher.h"

namespace kiln::serve {

struct FaceImageResult {
  std::vector<Face> faces;
  std::string error;  // the image could not be read (its faces are empty)
  int32_t batch_size = 0;
  int64_t queue_ns = 0;
};

struct FaceCallResult {
  int http_status = 200;  // 429 queue full, 503 closed or not loaded, 504 timed out: `error` says why
  std::string error;
  std::vector<FaceImageResult> images;
};
using FaceCallDone = std::function<void(FaceCallResult)>;

struct FaceServiceConfig {
  FaceSettings face;
  ExecSettings exec;
  int32_t instances = 1;
  BatcherConfig batcher;
};

class FaceService {
 public:
  // Opens every instance's analyzer; a failure leaves the service not ready (error() says why), never fails here.
  FaceService(const FaceServiceConfig& config, ServeMetrics* metrics, LogFn log);
  ~FaceService();
  FaceService(const FaceService&) = delete;
  FaceService& operator=(const FaceService&) = delete;

  // `done` runs exactly once, on a worker thread or (for a refusal) on the caller's.
  void submit(std::vector<FaceBatchImage> images, Scheduling scheduling, FaceCallDone done);
  // Stops intake; what is queued is still analyzed; the workers end once it is.
  void close();

  bool ready() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }
  FaceStageReport report() const { return m_report; }
  bool gpu_used() const;
  size_t queued() const { return m_batcher ? m_batcher->pending() : 0; }

 private:
  struct Call;
  struct Job {
    std::shared_ptr<Call> call;
    size_t index = 0;
  };
  void worker_loop(FaceAnalyzer* analyzer);
  void batch_run(FaceAnalyzer* analyzer, Batch<Job>& batch);

  ServeMetrics* m_metrics;
  std::string m_error;
  FaceStageReport m_report;
  std::vector<std::unique_ptr<FaceAnalyzer>> m_analyzers;
  std::unique_ptr<DynamicBatcher<Job>> m_batcher;
  std::vector<std::thread> m_workers;
};

}  // namespace kiln::serve
