// The server's counters and histograms, written out in Prometheus' text format (version 0.0.4) by GET /metrics.
// Thread-safe; labels are bounded (route patterns and model names, never raw paths).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kiln::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds = {});
  void observe(double value);
  // name_bucket{labels,le="..."} lines, then name_sum and name_count.
  void write(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::vector<double> m_bounds;
  std::vector<uint64_t> m_counts;  // per bound, not cumulative; the last is +Inf
  double m_sum = 0;
  uint64_t m_count = 0;
};

// What a model's state adds to /metrics at scrape time.
struct ModelGauges {
  bool ready = false;
  int64_t queued = 0;
  int64_t fallbacks = 0;  // execution providers given up (GPU -> CPU)
};

class ServeMetrics {
 public:
  void request_observe(const std::string& route, int status, double seconds);
  // One gRPC call answered: its method ("ModelInfer") and status code name ("OK", "INVALID_ARGUMENT").
  void grpc_request_observe(const std::string& method, const std::string& code, double seconds);
  // One batch of `size` items run by `model`, computing for compute_seconds; each item's queue time.
  void batch_observe(const std::string& model, int32_t size, double compute_seconds,
                     const std::vector<double>& queue_seconds);
  void rejected_observe(const std::string& model, const std::string& reason);  // "queue_full", "timeout"
  // A streamed frame's outcome ("answered", "dropped", "failed") and, when answered, its receive-to-sent seconds.
  void stream_frame_observe(const std::string& outcome, double seconds = 0);
  void stream_connections_add(int64_t delta);  // streams open
  // Models registered here are reported on every scrape.
  void gauges_register(const std::string& model, std::function<ModelGauges()> gauges);
  std::string text() const;

 private:
  struct ModelSeries {
    Histogram queue_seconds;
    Histogram compute_seconds;
    Histogram batch_size;
    uint64_t runs = 0;
    uint64_t items = 0;
    ModelSeries();
  };
  mutable std::mutex m_mutex;
  std::map<std::pair<std::string, int>, uint64_t> m_requests;  // (route, status)
  std::map<std::string, Histogram> m_request_seconds;
  std::map<std::pair<std::string, std::string>, uint64_t> m_grpc_requests;  // (method, code)
  std::map<std::string, Histogram> m_grpc_seconds;
  std::map<std::string, ModelSeries> m_models;
  std::map<std::pair<std::string, std::string>, uint64_t> m_rejected;
  std::map<std::string, uint64_t> m_stream_frames;  // by outcome
  Histogram m_stream_latency{{0.005, 0.01, 0.02, 0.033, 0.05, 0.1, 0.25, 0.5, 1, 5}};
  int64_t m_stream_connections = 0;
  std::vector<std::pair<std::string, std::function<ModelGauges()>>> m_gauges;
};

}  // namespace kiln::serve
