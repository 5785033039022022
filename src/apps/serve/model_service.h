// One model served over the Open Inference Protocol: `instances` worker threads, each with its own InferSession,
// fed by a DynamicBatcher; concurrent requests with the same item shape are concatenated along dimension 0, run
// once, and their rows handed back.
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
#include "apps/serve/serve_tensors.h"
#include "kiln/exec.h"
#include "kiln/infer.h"
#include "pipeline/batcher.h"

namespace kiln::serve {

struct InferCallResult {
  int http_status = 200;  // 400 bad input, 429 queue full, 503 not ready or closing, 504 timed out, 500 failed
  std::string error;
  std::vector<Tensor> outputs;
  int32_t batch_size = 0;  // requests in the batch it ran in
  int64_t queue_ns = 0;
};
using InferCallDone = std::function<void(InferCallResult)>;

struct ModelServiceConfig {
  std::string model;  // a packaged name or an .onnx path
  InferOptions options;
  int32_t instances = 1;
  BatcherConfig batcher;
};

class ModelService {
 public:
  ModelService(const ModelServiceConfig& config, ServeMetrics* metrics, LogFn log);
  ~ModelService();
  ModelService(const ModelService&) = delete;
  ModelService& operator=(const ModelService&) = delete;

  const std::string& name() const { return m_name; }
  bool ready() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }
  const ModelInfo& info() const { return m_info; }
  int64_t fallbacks() const;
  size_t queued() const { return m_batcher ? m_batcher->pending() : 0; }

  // Checks the tensor against the model's input (400 at once when it does not fit), then queues it.
  void submit(InferInputTensor input, Scheduling scheduling, InferCallDone done);
  void close();

 private:
  struct Job {
    std::shared_ptr<InferInputTensor> input;
    std::shared_ptr<InferCallResult> result;
    std::shared_ptr<InferCallDone> done;
  };
  Status input_check(const InferInputTensor& input) const;
  void worker_loop(InferSession* session);
  void batch_run(InferSession* session, Batch<Job>& batch);

  std::string m_name;
  std::string m_error;
  ModelInfo m_info;
  ServeMetrics* m_metrics;
  std::vector<std::unique_ptr<InferSession>> m_sessions;
  std::unique_ptr<DynamicBatcher<Job>> m_batcher;
  std::vector<std::thread> m_workers;
};

// A model's name as served: a packaged name as given, a path's file stem.
std::string model_served_name(const std::string& model);

}  // namespace kiln::serve
