#include "apps/serve/serve_metrics.h"

#include <algorithm>
#include <cstdio>

namespace kiln::serve {

namespace {

const std::vector<double> kSecondsBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
const std::vector<double> kBatchBounds = {1, 2, 4, 8, 16, 32, 64, 128};

std::string metrics_number(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

// A label value with \, " and newlines escaped.
std::string metrics_escaped(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void metrics_help(std::string* out, const char* name, const char* type, const char* text) {
  *out += std::string("# HELP ") + name + " " + text + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : m_bounds(std::move(bounds)), m_counts(m_bounds.size() + 1, 0) {}

void Histogram::observe(double value) {
  const size_t index = static_cast<size_t>(std::lower_bound(m_bounds.begin(), m_bounds.end(), value) - m_bounds.begin());
  ++m_counts[index];
  m_sum += value;
  ++m_count;
}

void Histogram::write(const std::string& name, const std::string& labels, std::string* out) const {
  const std::string prefix = labels.empty() ? "" : labels + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < m_bounds.size(); ++i) {
    cumulative += m_counts[i];
    *out += name + "_bucket{" + prefix + "le=\"" + metrics_number(m_bounds[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  *out += name + "_bucket{" + prefix + "le=\"+Inf\"} " + std::to_string(m_count) + "\n";
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  *out += name + "_sum" + braces + " " + metrics_number(m_sum) + "\n";
  *out += name + "_count" + braces + " " + std::to_string(m_count) + "\n";
}

ServeMetrics::ModelSeries::ModelSeries()
    : queue_seconds(kSecondsBounds), compute_seconds(kSecondsBounds), batch_size(kBatchBounds) {}

void ServeMetrics::request_observe(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_requests[{route, status}];
  auto it = m_request_seconds.find(route);
  if (it == m_request_seconds.end()) it = m_request_seconds.emplace(route, Histogram(kSecondsBounds)).first;
  it->second.observe(seconds);
}

void ServeMetrics::grpc_request_observe(const std::string& method, const std::string& code, double seconds) {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_grpc_requests[{method, code}];
  auto it = m_grpc_seconds.find(method);
  if (it == m_grpc_seconds.end()) it = m_grpc_seconds.emplace(method, Histogram(kSecondsBounds)).first;
  it->second.observe(seconds);
}

void ServeMetrics::batch_observe(const std::string& model, int32_t size, double compute_seconds,
                                 const std::vector<double>& queue_seconds) {
  std::lock_guard<std::mutex> lock(m_mutex);
  ModelSeries& series = m_models[model];
  series.batch_size.observe(size);
  series.compute_seconds.observe(compute_seconds);
  for (const double q : queue_seconds) series.queue_seconds.observe(q);
  ++series.runs;
  series.items += static_cast<uint64_t>(size);
}

void ServeMetrics::rejected_observe(const std::string& model, const std::string& reason) {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_rejected[{model, reason}];
}

void ServeMetrics::stream_frame_observe(const std::string& outcome, double seconds) {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_stream_frames[outcome];
  if (outcome == "answered") m_stream_latency.observe(seconds);
}

void ServeMetrics::stream_connections_add(int64_t delta) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_stream_connections += delta;
}

void ServeMetrics::gauges_register(const std::string& model, std::function<ModelGauges()> gauges) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_gauges.emplace_back(model, std::move(gauges));
}

std::string ServeMetrics::text() const {
  std::vector<std::pair<std::string, std::function<ModelGauges()>>> gauges;
  std::string out;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    gauges = m_gauges;
    metrics_help(&out, "kiln_serve_requests_total", "counter", "Requests answered, by route and HTTP status.");
    for (const auto& [key, count] : m_requests) {
      out += "kiln_serve_requests_total{route=\"" + metrics_escaped(key.first) + "\",code=\"" + std::to_string(key.second) +
             "\"} " + std::to_string(count) + "\n";
    }
    metrics_help(&out, "kiln_serve_request_failures_total", "counter", "Requests answered with a status of 400 or more.");
    std::map<std::string, uint64_t> failures;
    for (const auto& [key, count] : m_requests) {
      if (key.second >= 400) failures[key.first] += count;
    }
    for (const auto& [route, count] : failures) {
      out += "kiln_serve_request_failures_total{route=\"" + metrics_escaped(route) + "\"} " + std::to_string(count) + "\n";
    }
    metrics_help(&out, "kiln_serve_request_seconds", "histogram", "Time from the request read to the response written.");
    for (const auto& [route, histogram] : m_request_seconds) {
      histogram.write("kiln_serve_request_seconds", "route=\"" + metrics_escaped(route) + "\"", &out);
    }
    metrics_help(&out, "kiln_serve_grpc_requests_total", "counter", "gRPC calls answered, by method and status code.");
    for (const auto& [key, count] : m_grpc_requests) {
      out += "kiln_serve_grpc_requests_total{method=\"" + metrics_escaped(key.first) + "\",code=\"" + key.second +
             "\"} " + std::to_string(count) + "\n";
    }
    metrics_help(&out, "kiln_serve_grpc_request_seconds", "histogram", "Time from a gRPC call's start to its answer.");
    for (const auto& [method, histogram] : m_grpc_seconds) {
      histogram.write("kiln_serve_grpc_request_seconds", "method=\"" + metrics_escaped(method) + "\"", &out);
    }
    metrics_help(&out, "kiln_serve_model_runs_total", "counter", "Batches run by each model.");
    for (const auto& [model, series] : m_models) {
      out += "kiln_serve_model_runs_total{model=\"" + metrics_escaped(model) + "\"} " + std::to_string(series.runs) + "\n";
    }
    metrics_help(&out, "kiln_serve_model_items_total", "counter", "Items (images or requests) in those batches.");
    for (const auto& [model, series] : m_models) {
      out += "kiln_serve_model_items_total{model=\"" + metrics_escaped(model) + "\"} " + std::to_string(series.items) + "\n";
    }
    metrics_help(&out, "kiln_serve_batch_size", "histogram", "Items per batch.");
    for (const auto& [model, series] : m_models) {
      series.batch_size.write("kiln_serve_batch_size", "model=\"" + metrics_escaped(model) + "\"", &out);
    }
    metrics_help(&out, "kiln_serve_queue_seconds", "histogram", "Time each item waited in the batch queue.");
    for (const auto& [model, series] : m_models) {
      series.queue_seconds.write("kiln_serve_queue_seconds", "model=\"" + metrics_escaped(model) + "\"", &out);
    }
    metrics_help(&out, "kiln_serve_compute_seconds", "histogram", "Time each batch took to run.");
    for (const auto& [model, series] : m_models) {
      series.compute_seconds.write("kiln_serve_compute_seconds", "model=\"" + metrics_escaped(model) + "\"", &out);
    }
    metrics_help(&out, "kiln_serve_rejected_total", "counter", "Items refused: queue full (429) or timed out (504).");
    for (const auto& [key, count] : m_rejected) {
      out += "kiln_serve_rejected_total{model=\"" + metrics_escaped(key.first) + "\",reason=\"" + key.second + "\"} " +
             std::to_string(count) + "\n";
    }
    metrics_help(&out, "kiln_serve_stream_frames_total", "counter",
                 "Frames received on /v1/segment/stream: answered, dropped (stale) or failed.");
    for (const auto& [outcome, count] : m_stream_frames) {
      out += "kiln_serve_stream_frames_total{outcome=\"" + outcome + "\"} " + std::to_string(count) + "\n";
    }
    metrics_help(&out, "kiln_serve_stream_latency_seconds", "histogram", "A streamed frame's time from received to its mask sent.");
    m_stream_latency.write("kiln_serve_stream_latency_seconds", "", &out);
    metrics_help(&out, "kiln_serve_stream_connections", "gauge", "Streams open.");
    out += "kiln_serve_stream_connections " + std::to_string(m_stream_connections) + "\n";
  }
  // Outside the lock: a gauge reads its model's state.
  std::string ready;
  std::string queued;
  std::string fallbacks;
  for (const auto& [model, read] : gauges) {
    const ModelGauges g = read();
    const std::string label = "{model=\"" + metrics_escaped(model) + "\"} ";
    ready += "kiln_serve_model_ready" + label + (g.ready ? "1" : "0") + "\n";
    queued += "kiln_serve_queue_items" + label + std::to_string(g.queued) + "\n";
    fallbacks += "kiln_serve_fallbacks" + label + std::to_string(g.fallbacks) + "\n";
  }
  metrics_help(&out, "kiln_serve_model_ready", "gauge", "1 when the model loaded and serves.");
  out += ready;
  metrics_help(&out, "kiln_serve_queue_items", "gauge", "Items waiting in the model's batch queue.");
  out += queued;
  metrics_help(&out, "kiln_serve_fallbacks", "gauge", "Execution providers the model's sessions gave up (GPU to CPU).");
  out += fallbacks;
  return out;
}

}  // namespace kiln::serve
