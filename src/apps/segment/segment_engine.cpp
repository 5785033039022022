#include "apps/segment/segment_engine.h"

#include <algorithm>
#include <chrono>

#include "core/fault.h"
#include "kiln/image_ops.h"

namespace kiln {

namespace {

// The image ops' placement: the job's, refined by IMAGE_PROCESSING_GPU (false keeps the preprocess, the colour
// conversion, the probability op and the matte on the CPU while the model may run on a GPU). A bad value keeps the
// job's placement here; open() reports it.
ExecOptions image_ops_options(const ExecSettings& exec, ThreadPool* pool) {
  ExecOptions options = exec_options_make(exec, pool);
  ExecOptions refined = options;
  return exec_options_apply_env(OpKind::kPreprocess, &refined).is_ok() ? refined : options;
}

}  // namespace

SegmentEngine::SegmentEngine(const SegmentEngineConfig& config)
    : m_config(config), m_pool(config.exec.threads), m_executor(image_ops_options(config.exec, &m_pool), config.log) {}

SegmentEngine::~SegmentEngine() {
  stop(Status(Errc::kCancelled, "segment engine closed"));
  if (m_infer_thread.joinable()) m_infer_thread.join();
}

Result<std::unique_ptr<SegmentEngine>> SegmentEngine::open(const SegmentEngineConfig& config) {
  auto engine = std::unique_ptr<SegmentEngine>(new SegmentEngine(config));
  KILN_TRY(engine->open());
  return engine;
}

Status SegmentEngine::open() {
  ExecOptions image_ops = exec_options_make(m_config.exec, &m_pool);
  KILN_TRY(exec_options_apply_env(OpKind::kPreprocess, &image_ops));
  // Throughput batches of 8 feed a GPU; ONNX Runtime's CPU kernels gain nothing from them on this small model and a
  // full batch stalls the stages around it (kiln bench segment: batch 1 is 5-15 % faster than 8 on the CPU), so the
  // CPU provider takes frames one at a time unless a batch size is given.
  const bool batch_given = m_config.exec.batch_size > 0;
  m_max_batch = batch_given ? m_config.exec.batch_size : (m_config.latency ? 1 : 8);
  InferOptions options;
  options.mode = m_config.exec.mode;
  options.gpu_only = m_config.exec.gpu_only;
  options.fallback_on_error = m_config.exec.fallback_on_error;
  options.threads = m_config.exec.threads;
  options.spin_wait = false;  // decode, post-processing and encode share the cores
  options.gpu_provider = m_config.provider == "tensorrt" ? InferProvider::kTensorRt : InferProvider::kCuda;
  options.warmup_batch = m_max_batch;
  options.tensorrt = m_config.tensorrt;
  KILN_TRY_ASSIGN(m_model, SegmentModel::open(m_config.segment, options));
  if (!batch_given && m_model->session().report().provider == "cpu") m_max_batch = 1;
  m_stager = std::make_unique<InputStager>(m_model->session(), m_executor, m_model->preprocess(),
                                           m_model->input_width(), m_model->input_height(), m_model->input_layout());

  BatcherConfig batcher;
  batcher.max_batch_size = static_cast<int32_t>(m_max_batch);
  batcher.max_queue_delay_us =
      m_config.max_delay_us > 0 ? m_config.max_delay_us : (m_config.latency ? 0 : 5000);
  batcher.priority_levels = 2;  // 1: latency streams, 2: throughput streams
  batcher.default_priority_level = 2;
  batcher.timeout_action = TimeoutAction::kReject;
  KILN_TRY_ASSIGN(m_batcher, DynamicBatcher<SegmentFrame>::create(
                                 batcher, nullptr, [this](SegmentFrame& frame, const BatchResponse& response) {
                                   frame.dropped = !response.status.is_ok();
                                   frame.cancelled = frame.dropped && link(frame.stream).cancelled.load();
                                   deliver(std::move(frame));
                                 }));
  // Throughput: the batch size climbs to the one that gives the most frames per second (windows of 4 runs).
  if (!m_config.latency && m_max_batch > 1) {
    AdaptiveBatchSizerConfig sizer;
    sizer.profile = SizerProfile::kThroughput;
    sizer.max_batch_size = static_cast<int32_t>(m_max_batch);
    sizer.initial_batch_size = static_cast<int32_t>(m_max_batch);
    sizer.window = 4;
    KILN_TRY_ASSIGN(m_sizer, AdaptiveBatchSizer::create(sizer));
    m_adaptive = true;
  }
  m_infer_thread = std::thread([this] { infer_loop(); });
  return Status::ok();
}

SegmentEngine::Link& SegmentEngine::link(int32_t stream) {
  std::lock_guard<std::mutex> lock(m_links_mutex);
  return *m_links.at(static_cast<size_t>(stream));
}

int32_t SegmentEngine::stream_add(int64_t in_flight_limit, int64_t timeout_us) {
  auto l = std::make_unique<Link>();
  l->in_flight_limit = std::max<int64_t>(1, in_flight_limit);
  l->timeout_us = timeout_us;
  std::lock_guard<std::mutex> lock(m_links_mutex);
  m_links.push_back(std::move(l));
  return static_cast<int32_t>(m_links.size() - 1);
}

Status SegmentEngine::submit(SegmentFrame frame, int64_t wait_us) {
  Link& l = link(frame.stream);
  return submit_to(l, std::move(frame), false, nullptr, wait_us);
}

Status SegmentEngine::submit_numbered(SegmentFrame frame, int64_t* index, int64_t wait_us) {
  Link& l = link(frame.stream);
  return submit_to(l, std::move(frame), true, index, wait_us);
}

Status SegmentEngine::submit_to(Link& l, SegmentFrame frame, bool number, int64_t* index, int64_t wait_us) {
  if (index != nullptr) *index = -1;
  {
    std::unique_lock<std::mutex> lock(l.mutex);
    const auto room = [&] { return l.in_flight < l.in_flight_limit || m_stopped.load(); };
    if (wait_us < 0) {
      l.cv.wait(lock, room);
    } else if (!l.cv.wait_for(lock, std::chrono::microseconds(wait_us), room)) {
      return Status(Errc::kCancelled,
                    "segment engine: no room for the frame within " + std::to_string(wait_us / 1000) + " ms: " +
                        std::to_string(l.in_flight) + " frames of the stream in flight (its limit) and " +
                        std::to_string(l.ready.size()) + " inferred, waiting to be taken; take() and release() "
                        "frames to make room");
    }
    if (m_stopped.load()) return Status(Errc::kCancelled, "segment engine stopped");
    ++l.in_flight;
    l.in_flight_peak = std::max(l.in_flight_peak, l.in_flight);
    if (number) frame.frame.index = l.numbered++;
  }
  if (index != nullptr) *index = frame.frame.index;
  frame.arrived_ns = profile_now_ns();
  const int32_t priority = l.timeout_us > 0 ? 1 : 2;
  Status st = m_batcher->enqueue(std::move(frame), priority, l.timeout_us);
  if (!st.is_ok()) {
    {
      std::lock_guard<std::mutex> lock(l.mutex);
      --l.in_flight;
    }
    // A numbered frame that never arrives would hold its stream's consumer forever: the engine stops instead.
    if (number) stop(st);
  }
  return st;
}

std::vector<SegmentPoolSummary> SegmentEngine::pools(const std::vector<std::string>& stream_names) {
  std::vector<SegmentPoolSummary> out;
  const auto memory = [&](const std::string& name, const PoolStats& stats) {
    if (stats.allocations == 0) return;
    out.push_back({name, "bytes", static_cast<int64_t>(stats.peak_held_bytes), static_cast<int64_t>(stats.budget),
                   static_cast<int64_t>(stats.allocations), static_cast<int64_t>(stats.reuses)});
  };
  for (const auto& backend : BackendRegistry::instance().backends()) {
    memory(backend->name() + " host memory", backend->host_memory_stats());
    memory(backend->name() + " device memory", backend->memory_stats());
  }
  std::lock_guard<std::mutex> lock(m_links_mutex);
  for (size_t k = 0; k < m_links.size(); ++k) {
    Link& l = *m_links[k];
    std::lock_guard<std::mutex> link_lock(l.mutex);
    const std::string name = k < stream_names.size() ? stream_names[k] : "stream " + std::to_string(k);
    out.push_back({"frames in flight: " + name, "frames", l.in_flight_peak, l.in_flight_limit, 0, 0});
  }
  return out;
}

void SegmentEngine::stream_end(int32_t stream, int64_t total) {
  Link& l = link(stream);
  {
    std::lock_guard<std::mutex> lock(l.mutex);
    l.total = total;
  }
  l.cv.notify_all();
}

void SegmentEngine::stream_cancel(int32_t stream) { link(stream).cancelled = true; }

bool SegmentEngine::take(int32_t stream, SegmentFrame* out) {
  Link& l = link(stream);
  std::unique_lock<std::mutex> lock(l.mutex);
  l.cv.wait(lock, [&] {
    return m_stopped.load() || l.ready.count(l.next) != 0 || (l.total >= 0 && l.next >= l.total);
  });
  if (m_stopped.load()) return false;
  auto it = l.ready.find(l.next);
  if (it == l.ready.end()) return false;  // the stream has ended
  *out = std::move(it->second);
  l.ready.erase(it);
  ++l.next;
  return true;
}

void SegmentEngine::release(int32_t stream) {
  Link& l = link(stream);
  {
    std::lock_guard<std::mutex> lock(l.mutex);
    --l.in_flight;
  }
  l.cv.notify_all();
}

void SegmentEngine::finish() {
  m_batcher->close();
  if (m_infer_thread.joinable()) m_infer_thread.join();
}

void SegmentEngine::stop(const Status& why) {
  {
    std::lock_guard<std::mutex> lock(m_state_mutex);
    if (m_error.is_ok() && !m_stopped.load()) m_error = why;
  }
  m_stopped = true;
  if (m_batcher) m_batcher->close();
  std::lock_guard<std::mutex> links(m_links_mutex);
  for (auto& l : m_links) {
    { std::lock_guard<std::mutex> lock(l->mutex); }
    l->cv.notify_all();
  }
}

Status SegmentEngine::error() const {
  std::lock_guard<std::mutex> lock(m_state_mutex);
  return m_error;
}

double SegmentEngine::batch_mean() const { return m_batcher ? m_batcher->stats().average_batch_size() : 0; }

std::string SegmentEngine::model_input() const { return m_stager->where(m_model->session().report()); }

std::string SegmentEngine::preprocess_backend() const {
  std::lock_guard<std::mutex> lock(m_state_mutex);
  const std::string backend = m_preprocess_backend.empty() ? "cpu" : m_preprocess_backend;
  if (m_preprocess_nv12.empty()) return backend;
  return (m_preprocess_nv12 == backend ? backend : backend + ", " + m_preprocess_nv12) + " (from NV12)";
}

Status SegmentEngine::probability_on_device(Backend& device, const ImageView& output, const ProbabilityParams& params,
                                            const ImageView& map) {
  const OpCall call{OpKind::kProbability, &params, VarShapeBatchView{&output, 1, MemorySpace::kDevice},
                    VarShapeBatchView{&map, 1, MemorySpace::kDevice}, nullptr};
  KILN_TRY_ASSIGN(const Placement placement, m_executor.place(call));
  if (placement.backend != &device) {
    return Status(Errc::kNotImplemented, "the probability op is placed on " + placement.backend->name() + " (" +
                                             placement.reason + "), not on " + device.name());
  }
  if (fault_should_fail(FaultSite::kDeviceMap)) {
    return Status(Errc::kDeviceError, "injected failure of the probability map on the device (KILN_FAULT)");
  }
  KILN_TRY(m_executor.run(call));
  ++m_device_probability_frames;
  return Status::ok();
}

void SegmentEngine::device_probabilities_end(const std::string& why) {
  if (m_device_probabilities_off.exchange(true)) return;
  std::lock_guard<std::mutex> lock(m_state_mutex);
  m_device_probabilities_note = why;
}

bool SegmentEngine::device_fallback_allowed(const Status& st) const {
  if (st.code() != Errc::kDeviceError) return true;  // not a failure of the device: the host does it instead
  return m_config.exec.fallback_on_error && m_config.exec.mode != ExecMode::kGpu;
}

std::string SegmentEngine::probabilities_where() const {
  const int64_t frames = m_device_probability_frames.load();
  std::lock_guard<std::mutex> lock(m_state_mutex);
  std::string text = frames > 0 ? "device (" + std::to_string(frames) + " frames)" : std::string();
  if (!m_device_probabilities_note.empty()) {
    text += (text.empty() ? "host (" : ", then host (") + m_device_probabilities_note + ")";
  }
  return text.empty() ? "host" : text;
}

std::string SegmentEngine::matte_backend() const {
  std::lock_guard<std::mutex> lock(m_state_mutex);
  return m_matte_backend.empty() ? "cpu" : m_matte_backend;
}

void SegmentEngine::deliver(SegmentFrame&& frame) {
  Link& l = link(frame.stream);
  {
    std::lock_guard<std::mutex> lock(l.mutex);
    const int64_t index = frame.frame.index;
    l.ready.emplace(index, std::move(frame));
  }
  l.cv.notify_all();
}

void SegmentEngine::infer_loop() {
  Profiler::instance().set_thread_name("infer");
  StagedInput input;  // reused: device memory the provider reads in place, or the session's (pinned) host pool
  for (;;) {
    auto next = m_batcher->next_batch();
    if (!next.is_ok()) break;  // closed and drained
    Batch<SegmentFrame>& batch = next.value();
    if (batch.empty()) continue;
    const auto n = static_cast<int64_t>(batch.size());
    const int64_t begin = profile_now_ns();
    if (std::all_of(batch.items.begin(), batch.items.end(),
                    [&](const auto& item) { return link(item.request.stream).cancelled.load(); })) {
      m_batcher->complete(batch, 0, Status(Errc::kCancelled, "cancelled before it was inferred"));
      continue;
    }
    Status st;
    {
      StageTimer timer(m_infer);
      st = batch_stage(batch, &input);
      if (st.is_ok()) st = batch_infer(input, batch);
    }
    if (!st.is_ok()) {
      stop(st);
      m_batcher->complete(batch, profile_now_ns() - begin, st);
      break;
    }
    const int64_t compute_ns = profile_now_ns() - begin;
    m_batcher->complete(batch, compute_ns);
    batch_size_adapt(n, compute_ns);
  }
}

Status SegmentEngine::batch_infer(const StagedInput& input, Batch<SegmentFrame>& batch) {
  // The provider writes into device memory wherever the batch was staged; the job's image ops decide (in the
  // streams' smoothers) whether the outputs are read there.
  Backend* const device = m_model->session().device_backend();
  const char* const moved = m_executor.moved_to_cpu() ? "the job's image ops moved to the CPU"
                            : device == nullptr       ? "the model moved to the CPU provider"
                                                      : nullptr;
  if (moved != nullptr && m_device_outputs_seen) device_probabilities_end(moved);
  const auto items = static_cast<int64_t>(batch.items.size());
  if (!m_device_probabilities_off && m_executor.options().mode != ExecMode::kCpu && moved == nullptr &&
      items <= m_device_batch_limit) {
    SegmentDeviceOutput out;
    const Status st = m_model->run_to_device(*m_stager, input, &out);
    if (st.is_ok()) {
      m_device_outputs_seen = true;
      for (size_t i = 0; i < batch.items.size(); ++i) {
        SegmentFrame& f = batch.items[i].request;
        f.output_device = out.memory;
        f.output_device_view = out.views[i];
        f.output_params = out.params;
        f.prob.clear();
        f.prob_width = out.width;
        f.prob_height = out.height;
      }
      return st;
    }
    // NotImplemented: not yet (the outputs' shapes, the activation are learned from a batch on the host). Out of
    // memory: the host run below may fit, or halves the batch; batches as large are not tried there again. A failed
    // run ends the device path for the job, and the host run below moves to the next provider.
    if (st.code() == Errc::kOutOfMemory) {
      m_device_batch_limit = items - 1;
    } else if (st.code() != Errc::kNotImplemented) {
      device_probabilities_end("the model's run into device memory: " + st.message());
    }
  }
  std::vector<std::vector<float>> probs;
  int32_t width = 0, height = 0;
  KILN_TRY(m_model->run(*m_stager, input, &probs, &width, &height));
  for (size_t i = 0; i < batch.items.size(); ++i) {
    SegmentFrame& f = batch.items[i].request;
    f.prob = std::move(probs[i]);
    f.prob_width = width;
    f.prob_height = height;
  }
  return Status::ok();
}

int64_t SegmentEngine::device_frames_fit(int64_t frame_bytes) const {
  Backend* const device = m_stager->device_path();
  if (device == nullptr || frame_bytes <= 0) return -1;
  // Half the pool's budget; without one, a quarter of what the device had free at the first call (measured once, so
  // that every input of a job is capped alike): the models' arena, NVDEC's surfaces and NVENC's frames need the
  // rest, and another process may hold part of it.
  if (m_device_frames_room == 0) {
    m_device_frames_room = device->memory_stats().budget / 2;
    const std::vector<DeviceInfo> infos = device->devices();
    if (m_device_frames_room == 0 && !infos.empty() && infos[0].free_memory > 0) {
      m_device_frames_room = static_cast<uint64_t>(infos[0].free_memory) / 4;
    }
  }
  if (m_device_frames_room == 0) return -1;
  return static_cast<int64_t>(m_device_frames_room / BufferPool::size_class(static_cast<size_t>(frame_bytes)));
}

// A batch that ran out of memory was run in halves by the session, which now splits anything larger than what
// fitted: the batcher stops forming such batches, and the sizer stops climbing back to them.
void SegmentEngine::batch_size_adapt(int64_t batch, int64_t compute_ns) {
  const InferReport report = m_model->session().report();
  if (report.oom_halvings > m_halvings_seen) {
    m_halvings_seen = report.oom_halvings;
    if (m_adaptive) m_sizer.on_memory_pressure();
  }
  int64_t limit = m_max_batch;
  if (m_adaptive) {
    m_sizer.observe(static_cast<int32_t>(batch), compute_ns);
    limit = m_sizer.batch_size();
  }
  if (report.batch_limit > 0) limit = std::min(limit, report.batch_limit);
  m_batcher->batch_limit_set(static_cast<int32_t>(limit));
}

}  // namespace kiln
