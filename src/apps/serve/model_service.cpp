#include "apps/serve/model_service.h"

#include <chrono>
#include <cstring>
#include <filesystem>

namespace kiln::serve {

namespace {

int64_t model_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string model_shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// Rows [first, first + count) of a batch-first tensor.
Tensor rows_of(const Tensor& t, int64_t first, int64_t count) {
  Tensor out;
  out.name = t.name;
  out.type = t.type;
  out.shape = t.shape;
  out.shape[0] = count;
  const int64_t row = t.shape[0] == 0 ? 0 : t.elements() / t.shape[0];
  out.data.assign(t.data.begin() + first * row, t.data.begin() + (first + count) * row);
  const size_t size = tensor_type_exact_size(t.type);
  if (!t.exact.empty() && size > 0) {
    out.exact.assign(t.exact.begin() + static_cast<int64_t>(size) * first * row,
                     t.exact.begin() + static_cast<int64_t>(size) * (first + count) * row);
  }
  return out;
}

}  // namespace

std::string model_served_name(const std::string& model) {
  if (model.size() > 5 && model.compare(model.size() - 5, 5, ".onnx") == 0) {
    return std::filesystem::path(model).stem().string();
  }
  return model;
}

ModelService::ModelService(const ModelServiceConfig& config, ServeMetrics* metrics, LogFn log)
    : m_name(model_served_name(config.model)), m_metrics(metrics) {
  auto path = model_path_resolve(config.model);
  if (!path.is_ok()) {
    m_error = path.status().message();
    return;
  }
  for (int32_t i = 0; i < std::max(1, config.instances); ++i) {
    auto session = InferSession::open(path.value(), config.options);
    if (!session.is_ok()) {
      m_error = session.status().message();
      m_sessions.clear();
      return;
    }
    m_sessions.push_back(std::move(session).value());
  }
  m_info = m_sessions.front()->info();
  if (m_info.inputs.size() != 1) {
    m_error = "the model has " + std::to_string(m_info.inputs.size()) + " inputs; kiln serve runs models of one input";
    return;
  }
  if (log) log("serve: " + m_name + " on " + m_sessions.front()->report().provider);
  auto on_complete = [metrics, name = m_name](Job& job, const BatchResponse& response) {
    InferCallResult& result = *job.result;
    if (!response.status.is_ok() && result.http_status == 200) {
      const bool timeout = response.status.message().find("timed out") != std::string::npos;
      metrics->rejected_observe(name, timeout ? "timeout" : "failed");
      result.http_status = timeout ? 504 : 500;
      result.error = timeout ? "the request waited in the queue past its timeout" : response.status.message();
    }
    result.batch_size = response.batch_size;
    result.queue_ns = response.queue_ns;
    (*job.done)(std::move(result));
  };
  auto batcher = DynamicBatcher<Job>::create(config.batcher, nullptr, on_complete);
  if (!batcher.is_ok()) {
    m_error = batcher.status().message();
    return;
  }
  m_batcher = std::move(batcher).value();
  for (auto& session : m_sessions) m_workers.emplace_back([this, s = session.get()] { worker_loop(s); });
}

ModelService::~ModelService() {
  close();
  for (auto& worker : m_workers) worker.join();
}

void ModelService::close() {
  if (m_batcher) m_batcher->close();
}

int64_t ModelService::fallbacks() const {
  int64_t count = 0;
  for (const auto& session : m_sessions) count += static_cast<int64_t>(session->report().fallbacks.size());
  return count;
}

Status ModelService::input_check(const InferInputTensor& input) const {
  const TensorInfo& expected = m_info.inputs.front();
  if (input.name != expected.name) {
    return invalid_argument("unexpected input \"" + input.name + "\": " + m_name + " takes \"" + expected.name + "\"");
  }
  if (input.datatype != oip_datatype(expected.type) || input.datatype != "FP32") {
    return invalid_argument("input " + input.name + ": datatype " + input.datatype + ", expected " +
                            oip_datatype(expected.type) + (expected.type == TensorType::kFloat32 ? "" : " (not served)"));
  }
  const bool rank_ok = input.shape.size() == expected.shape.size();
  bool dims_ok = rank_ok && !input.shape.empty() && input.shape[0] >= 1;
  for (size_t d = 0; dims_ok && d < expected.shape.size(); ++d) {
    if (expected.shape[d] >= 0 && input.shape[d] != expected.shape[d] && !(d == 0 && m_info.batch_dynamic)) {
      dims_ok = false;
    }
  }
  if (!dims_ok) {
    return invalid_argument("input " + input.name + ": shape " + model_shape_text(input.shape) + " does not fit the model's " +
                            model_shape_text(expected.shape) + " (-1: any size)");
  }
  return Status::ok();
}

void ModelService::submit(InferInputTensor input, Scheduling scheduling, InferCallDone done) {
  InferCallResult refusal;
  if (!ready()) {
    refusal.http_status = 503;
    refusal.error = "model " + m_name + " is not ready: " + m_error;
    return done(std::move(refusal));
  }
  if (const Status st = input_check(input); !st.is_ok()) {
    refusal.http_status = 400;
    refusal.error = st.message();
    return done(std::move(refusal));
  }
  const size_t bytes = input.data.size() * sizeof(float);
  Job job{std::make_shared<InferInputTensor>(std::move(input)), std::make_shared<InferCallResult>(),
          std::make_shared<InferCallDone>(std::move(done))};
  auto done_copy = job.done;
  const Status st = m_batcher->enqueue(std::move(job), scheduling.priority, scheduling.timeout_us, bytes);
  if (!st.is_ok()) {
    const bool full = st.message().find("full") != std::string::npos;
    m_metrics->rejected_observe(m_name, full ? "queue_full" : "closed");
    refusal.http_status = full ? 429 : 503;
    refusal.error = full ? "the queue of " + m_name + " is full: retry later" : st.message();
    (*done_copy)(std::move(refusal));
  }
}

void ModelService::worker_loop(InferSession* session) {
  for (;;) {
    auto batch = m_batcher->next_batch();
    if (!batch.is_ok()) return;
    if (batch.value().empty()) continue;
    batch_run(session, batch.value());
  }
}

// Requests of the same item shape run as one batch; a model whose outputs are not one row per item, or a batch that
// fails, is rerun one request at a time so that each gets its own answer.
void ModelService::batch_run(InferSession* session, Batch<Job>& batch) {
  const int64_t start = model_now_ns();
  size_t first = 0;
  while (first < batch.size()) {
    const std::vector<int64_t>& shape = batch.items[first].request.input->shape;
    size_t end = first + 1;
    while (end < batch.size() &&
           std::equal(shape.begin() + 1, shape.end(), batch.items[end].request.input->shape.begin() + 1,
                      batch.items[end].request.input->shape.end())) {
      ++end;
    }
    bool done = false;
    if (end - first > 1 && m_info.batch_dynamic) {
      std::vector<int64_t> joined_shape = shape;
      joined_shape[0] = 0;
      std::vector<float> joined;
      for (size_t k = first; k < end; ++k) {
        const InferInputTensor& in = *batch.items[k].request.input;
        joined.insert(joined.end(), in.data.begin(), in.data.end());
        joined_shape[0] += in.shape[0];
      }
      std::vector<Tensor> outputs;
      if (session->run(joined, joined_shape, &outputs).is_ok()) {
        done = true;
        for (const Tensor& t : outputs) done = done && !t.shape.empty() && t.shape[0] == joined_shape[0];
        int64_t row = 0;
        for (size_t k = first; done && k < end; ++k) {
          const int64_t rows = batch.items[k].request.input->shape[0];
          for (const Tensor& t : outputs) batch.items[k].request.result->outputs.push_back(rows_of(t, row, rows));
          row += rows;
        }
      }
    }
    for (size_t k = first; !done && k < end; ++k) {
      const InferInputTensor& in = *batch.items[k].request.input;
      InferCallResult& result = *batch.items[k].request.result;
      result.outputs.clear();
      const Status st = session->run(in.data, in.shape, &result.outputs);
      if (!st.is_ok()) {
        result.http_status = st.code() == Errc::kInvalidArgument ? 400 : 500;
        result.error = st.message();
      }
    }
    first = end;
  }
  const int64_t compute_ns = model_now_ns() - start;
  std::vector<double> queue_seconds;
  for (const auto& item : batch.items) queue_seconds.push_back(static_cast<double>(item.queue_ns) * 1e-9);
  m_metrics->batch_observe(m_name, static_cast<int32_t>(batch.size()), static_cast<double>(compute_ns) * 1e-9,
                           queue_seconds);
  m_batcher->complete(batch, compute_ns);
}

}  // namespace kiln::serve
