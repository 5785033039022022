// InferSession on ONNX Runtime: the model's bytes are kept so that a session can be rebuilt on the CPU provider
// when a GPU provider fails.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <shared_mutex>
#include <type_traits>

#include "core/fault.h"
#include "core/file_read.h"
#include "core/float_mode.h"
#include "core/gpu_budget.h"
#include "core/thread_pool.h"
#include "infer/bound_outputs.h"
#include "infer/device_tensor.h"
#include "infer/infer_placement.h"
#include "infer/input_check.h"
#include "infer/oom_halving.h"
#include "infer/ort_env.h"
#include "infer/ort_values.h"
#include "infer/providers.h"
#include "kiln/infer.h"

namespace kiln {

namespace {

// kiln's CUDA backend (on GPU_DEVICE_ID, the device the GPU providers run on), or nullptr.
// The CUDA backend's pinned memory for the GPU providers (ONNX Runtime's copies from it run at full speed), the
// CPU's pool otherwise.
Backend& host_backend_for(InferProvider provider) {
  Backend* cuda = provider != InferProvider::kCpu ? BackendRegistry::instance().find(BackendKind::kCuda) : nullptr;
  return cuda != nullptr ? *cuda : BackendRegistry::instance().cpu();
}

class OrtInferSession final : public InferSession {
 public:
  OrtInferSession(std::vector<uint8_t> model, std::string label, InferOptions options, std::string folder)
      : m_model(std::move(model)), m_label(std::move(label)), m_options(std::move(options)), m_folder(std::move(folder)) {}

  Status open() {
    const TensorRtOptions& trt = m_options.tensorrt;
    const int profiles = static_cast<int>(!trt.profile_min_shapes.empty()) +
                         static_cast<int>(!trt.profile_opt_shapes.empty()) +
                         static_cast<int>(!trt.profile_max_shapes.empty());
    if (profiles != 0 && profiles != 3) {
      return invalid_argument(m_label + ": a TensorRT optimization profile needs its min, opt and max shapes "
                              "together (trt_profile_min_shapes, trt_profile_opt_shapes, trt_profile_max_shapes)");
    }
    auto plan = infer_plan(m_options, BackendRegistry::instance());
    if (!plan.is_ok()) return plan.status();
    m_plan = std::move(plan).value();
    m_report.placement = m_plan.reason;  // no run yet: nothing else touches the report
    // GPU_DEVICE_ID, GPU_MEMORY_LIMIT_GB: the CUDA backend's, read once (its stream and device are the session's).
    KILN_TRY_ASSIGN(m_backend, BackendRegistry::instance().options());
    Status last;
    for (size_t i = 0; i < m_plan.providers.size(); ++i) {
      last = session_create(m_plan.providers[i]);
      if (last.is_ok()) {
        m_next_provider = i + 1;
        break;
      }
      // The model itself is bad: no provider will load it.
      if (last.code() == Errc::kInvalidArgument) return last;
      report_fallback(last.message());
    }
    if (!m_session) return last;
    KILN_TRY(ort_call(Errc::kInvalidArgument, m_label + ": cannot describe the model",
                      [&] { m_info = model_info_of(*m_session); }));
    m_report.batch_dynamic = m_info.batch_dynamic;
    for (const auto& t : m_info.inputs) m_input_names.push_back(t.name);
    for (const auto& t : m_info.outputs) m_output_names.push_back(t.name);
    return warm_up();
  }

  const ModelInfo& info() const override { return m_info; }

  InferReport report() const override {
    std::lock_guard<std::mutex> lock(m_report_mutex);
    return m_report;
  }

  Status run(std::span<const float> input, const std::vector<int64_t>& shape, std::vector<Tensor>* outputs) override {
    Status st = input_check(input, shape);
    if (!st.is_ok()) return st;
    return m_halving.run<Tensor>(
        input, shape, outputs,
        [this](std::span<const float> in, const std::vector<int64_t>& s, std::vector<Tensor>* out) {
          return run_on_a_provider(in, s, out);
        },
        [this](const std::vector<Tensor>& a, int64_t na, const std::vector<Tensor>& b, int64_t nb,
               std::vector<Tensor>* out) { return tensors_join(a, na, b, nb, m_label, out); },
        [this](int64_t limit) { halving_report(limit); });
  }

  Backend& host_backend() const override { return *m_host_backend.load(); }

  Status run_bound(std::span<const float> input, const std::vector<int64_t>& shape,
                   std::vector<HostTensor>* outputs) override {
    KILN_TRY(input_check(input, shape));
    return bound_halved(input, shape, outputs, nullptr);
  }

  Backend* device_backend() const override { return m_device_backend.load(); }

  Status run_bound_from_device(std::span<const float> input, Backend& device, const std::vector<int64_t>& shape,
                               std::vector<HostTensor>* outputs) override {
    KILN_TRY(input_check(input, shape));
    return bound_halved(input, shape, outputs, &device);
  }

  Status run_to_device(std::span<const float> input, Backend* input_device, const std::vector<int64_t>& shape,
                       std::vector<DeviceTensor>* outputs) override {
    KILN_TRY(input_check(input, shape));
    std::shared_lock<std::shared_mutex> running(m_session_mutex);
    Backend* const device = m_device_backend.load();
    if (device == nullptr) return Status(Errc::kNotImplemented, m_label + ": the model runs on the CPU provider");
    if (input_device != nullptr && input_device != device) {
      return Status(Errc::kNotImplemented, m_label + ": the input lies in another backend's device memory");
    }
    const std::vector<int64_t> item(shape.begin() + 1, shape.end());
    if (m_halving.limit() > 0 && shape[0] > m_halving.limit()) {
      return Status(Errc::kNotImplemented, m_label + ": larger than the largest batch that fitted");
    }
    {
      std::lock_guard<std::mutex> lock(m_bound_mutex);
      if (m_info.inputs[0].shape[0] == 1 && shape[0] > 1) {
        return Status(Errc::kNotImplemented, m_label + ": the model runs item by item");
      }
      if (!m_bound.learned(item) || !m_bound.bindable()) {
        return Status(Errc::kNotImplemented, m_label + ": the outputs' shapes are not known for this input size");
      }
      outputs->resize(m_bound.count());
      for (size_t k = 0; k < outputs->size(); ++k) {
        DeviceTensor& out = (*outputs)[k];
        out.name = m_output_names[k];
        out.shape = m_bound.shape_of(k, shape[0]);
      }
    }
    for (DeviceTensor& out : *outputs) {  // a block still held by a consumer of the last batch is left to it
      const size_t bytes = std::max<size_t>(static_cast<size_t>(out.elements()) * sizeof(float), 1);
      if (out.memory && out.memory.use_count() == 1 && out.memory->bytes() >= bytes) continue;
      KILN_TRY_ASSIGN(DeviceBlock block, DeviceBlock::acquire(*device, bytes));
      out.memory = std::make_shared<DeviceBlock>(std::move(block));
    }
    KILN_TRY(injected_fault());
    KILN_TRY(run_in_place(Errc::kDeviceError, input, shape, input_device, device, *outputs));
    std::lock_guard<std::mutex> lock(m_report_mutex);
    ++m_report.bound_runs;
    ++m_report.device_output_runs;
    if (input_device != nullptr) ++m_report.device_input_runs;
    return Status::ok();
  }

 private:
  // run_bound's batches, halved when they run out of memory; `device`: the backend whose memory holds `input`
  // (nullptr: host memory). Slices of device memory are only passed on, never read here.
  Status bound_halved(std::span<const float> input, const std::vector<int64_t>& shape,
                      std::vector<HostTensor>* outputs, Backend* device) {
    return m_halving.run<HostTensor>(
        input, shape, outputs,
        [this, device](std::span<const float> in, const std::vector<int64_t>& s, std::vector<HostTensor>* out) {
          return run_on_a_provider(in, s, out, device);
        },
        [this](const std::vector<HostTensor>& a, int64_t na, const std::vector<HostTensor>& b, int64_t nb,
               std::vector<HostTensor>* out) { return BoundOutputs::join(a, na, b, nb, m_label, host_backend(), out); },
        [this](int64_t limit) { halving_report(limit); });
  }

  void halving_report(int64_t limit) {
    std::lock_guard<std::mutex> lock(m_report_mutex);
    ++m_report.oom_halvings;
    m_report.batch_limit = limit;
  }

  // One run on the current provider, falling back to the next when it fails (or a single item does not fit: a
  // larger batch that runs out of memory is halved instead, by the caller). Runs share the session (ONNX Runtime's
  // Run is thread-safe); only replacing it waits for the runs in flight, and the first failed run to get there
  // replaces it: the others run again on its successor.
  template <typename Out>
  Status run_on_a_provider(std::span<const float> input, const std::vector<int64_t>& shape,
                           std::vector<Out>* outputs, Backend* device = nullptr) {
    while (true) {
      uint64_t generation = 0;
      Status st;
      {
        std::shared_lock<std::shared_mutex> running(m_session_mutex);
        generation = m_session_generation;
        if constexpr (std::is_same_v<Out, Tensor>) outputs->clear();  // bound outputs keep their blocks
        st = run_locked(input, shape, outputs, device);
        if (st.is_ok() || !fallback_possible(st, shape[0] == 1)) return st;
      }
      std::unique_lock<std::shared_mutex> replacing(m_session_mutex);
      if (generation != m_session_generation) continue;
      report_fallback(std::string(infer_provider_name(m_provider)) + " failed while running: " + st.message());
      Status created = session_create_next();
      if (!created.is_ok()) return created;
    }
  }

  // Where an input or output lies, for ONNX Runtime: kiln's device memory on the providers' CUDA device, or host
  // memory.
  Ort::MemoryInfo input_memory(Backend* device) const {
    if (device != nullptr) return Ort::MemoryInfo("Cuda", OrtDeviceAllocator, m_backend.device_id, OrtMemTypeDefault);
    return Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  }

  Status run_locked(std::span<const float> input, const std::vector<int64_t>& shape,
                    std::vector<HostTensor>* outputs, Backend* device) {
    if (device != nullptr && device != m_device_backend.load()) {
      // The provider that reads this memory in place was given up: the one now running gets a host copy.
      KILN_TRY_ASSIGN(const HostBlock copy, HostBlock::acquire(host_backend(), input.size_bytes()));
      KILN_TRY(device->device_download(input.data(), copy.data(), input.size_bytes()));
      return run_locked(std::span<const float>(static_cast<const float*>(copy.data()), input.size()), shape, outputs,
                        nullptr);
    }
    Status st = run_locked_bound(input, shape, outputs, device);
    if (st.is_ok() && device != nullptr) {
      std::lock_guard<std::mutex> lock(m_report_mutex);
      ++m_report.device_input_runs;
    }
    return st;
  }

  // One run with `input` in `input_device`'s memory (nullptr: the host's) whose outputs ONNX Runtime writes where
  // `outputs` point: in `output_device`'s memory, or the host's.
  template <typename Out>
  Status run_in_place(Errc code, std::span<const float> input, const std::vector<int64_t>& shape,
                      Backend* input_device, Backend* output_device, std::vector<Out>& outputs) {
    const std::unique_lock<std::mutex> turn = gpu_run_turn();
    return ort_call(code, m_label + ": run on the " + std::string(infer_provider_name(m_provider)) +
                              " execution provider failed", [&] {
      const Ort::MemoryInfo memory = input_memory(output_device);
      Ort::IoBinding binding(*m_session);
      binding.BindInput(m_input_names[0].c_str(),
                        Ort::Value::CreateTensor<float>(input_memory(input_device), const_cast<float*>(input.data()),
                                                        input.size(), shape.data(), shape.size()));
      for (Out& out : outputs) {
        binding.BindOutput(out.name.c_str(), Ort::Value::CreateTensor<float>(memory, out.data(), out.elements(),
                                                                             out.shape.data(), out.shape.size()));
      }
      // Run ends waiting for the provider's compute stream (disable_synchronize_execution_providers left at 0): the
      // outputs are complete. IoBinding::SynchronizeOutputs would add a cudaDeviceSynchronize (every stream's work).
      m_session->Run(Ort::RunOptions{nullptr}, binding);
    });
  }

  Status run_locked_bound(std::span<const float> input, const std::vector<int64_t>& shape,
                          std::vector<HostTensor>* outputs, Backend* device) {
    const std::vector<int64_t> item(shape.begin() + 1, shape.end());
    const bool per_item = m_info.inputs[0].shape[0] == 1 && shape[0] > 1;
    bool bind = false;
    {
      std::lock_guard<std::mutex> lock(m_bound_mutex);
      bind = !per_item && m_bound.learned(item) && m_bound.bindable();
      if (bind) KILN_TRY(m_bound.prepare(shape[0], m_output_names, host_backend(), outputs));
    }
    if (!bind) {
      std::vector<Tensor> copied;
      KILN_TRY(run_locked(input, shape, &copied, device));
      if (!per_item) bound_learn(item, shape[0], copied, /*again=*/false);
      return BoundOutputs::copy(copied, host_backend(), outputs);
    }
    KILN_TRY(injected_fault());
    const Errc code = m_provider == InferProvider::kCpu ? Errc::kInvalidArgument : Errc::kDeviceError;
    const FloatModeScope float_mode(m_options.flush_denormals && m_provider == InferProvider::kCpu);
    Status bound = run_in_place(code, input, shape, device, nullptr, *outputs);
    if (bound.is_ok()) {
      std::lock_guard<std::mutex> lock(m_report_mutex);
      ++m_report.bound_runs;
      return bound;
    }
    if (bound.code() == Errc::kOutOfMemory) return bound;  // an unbound rerun would only run out again
    // An output whose shape differs from the learned one (it depends on more than the input's size) fails the bound
    // run: run unbound, learn again, and let only a failure of that run count.
    std::vector<Tensor> copied;
    KILN_TRY(run_locked(input, shape, &copied, device));
    bound_learn(item, shape[0], copied, /*again=*/true);
    return BoundOutputs::copy(copied, host_backend(), outputs);
  }

  // Learns the outputs' shapes from an unbound run: when none are known for this input size, or `again`.
  void bound_learn(const std::vector<int64_t>& item, int64_t batch, const std::vector<Tensor>& copied, bool again) {
    std::lock_guard<std::mutex> lock(m_bound_mutex);
    if (again || !m_bound.learned(item)) m_bound.learn(item, batch, copied, m_info.outputs);
  }

  // Given kiln's stream, ONNX Runtime runs every Run of the session on it with one cuDNN and one cuBLAS handle (made
  // for the thread that created the session), and cuDNN forbids using a handle from two threads at once: runs on a
  // GPU provider take turns (one stream runs them in turn anyway). Runs on the CPU provider overlap.
  std::unique_lock<std::mutex> gpu_run_turn() {
    if (m_provider == InferProvider::kCpu || !m_stream) return {};
    return std::unique_lock<std::mutex>(m_gpu_run_mutex);
  }

  Status injected_fault() const {
    const std::string on = std::string(" (KILN_FAULT) on ") + infer_provider_name(m_provider);
    if (fault_should_fail(FaultSite::kProvider)) return Status(Errc::kDeviceError, "injected provider failure" + on);
    if (fault_should_fail(FaultSite::kProviderMemory)) return Status(Errc::kOutOfMemory, "injected out of memory" + on);
    return Status::ok();
  }

  void report_fallback(const std::string& why) {
    std::lock_guard<std::mutex> lock(m_report_mutex);
    m_report.fallbacks.push_back(why);
  }

  // A GPU provider that failed, or ran out of memory where the caller cannot run smaller batches, with a provider
  // left in the plan (mode gpu plans no CPU, so TensorRT falls back to CUDA there and CUDA to nothing).
  bool fallback_possible(const Status& st, bool out_of_memory_too) const {
    const bool failed = st.code() == Errc::kDeviceError || (out_of_memory_too && st.code() == Errc::kOutOfMemory);
    return failed && m_provider != InferProvider::kCpu && m_options.fallback_on_error &&
           m_next_provider < m_plan.providers.size();
  }

  Status session_create_next() {
    Status last(Errc::kDeviceError, "no execution provider left to try");
    while (m_next_provider < m_plan.providers.size()) {
      last = session_create(m_plan.providers[m_next_provider++]);
      if (last.is_ok()) return last;
      report_fallback(last.message());
    }
    return last;
  }

  Status session_create(InferProvider provider) {
    ort_env();  // before any ONNX Runtime call that may log (provider options, session options)
    Ort::SessionOptions session_options{nullptr};
    KILN_TRY(ort_call(Errc::kInvalidArgument, m_label + ": session options", [&] {
      session_options = Ort::SessionOptions();
      session_options.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_ALL);
      // More intra-op threads than cores only wait on each other at ONNX Runtime's barriers (kiln segment --threads
      // 16 on 2 cores: the model 40 % slower than at 2).
      session_options.SetIntraOpNumThreads(std::min(m_options.threads, ThreadPool::hardware_threads()));
      session_options.SetInterOpNumThreads(1);
      if (!m_options.spin_wait) session_options.AddConfigEntry("session.intra_op.allow_spinning", "0");
      if (m_options.flush_denormals) session_options.AddConfigEntry("session.set_denormal_as_zero", "1");
      // Weights kept in files beside the model (ONNX external data) are found next to it.
      if (!m_folder.empty()) {
        session_options.AddConfigEntry("session.model_external_initializers_file_folder_path", m_folder.c_str());
      }
    }));
    Backend* const cuda = provider != InferProvider::kCpu ? BackendRegistry::instance().find(BackendKind::kCuda) : nullptr;
    if (cuda != nullptr && !m_stream) {
      auto stream = cuda->stream_create();  // none: ONNX Runtime makes its own, as without kiln's CUDA backend
      if (stream.is_ok()) m_stream = std::move(stream).value();
    }
    std::string memory_note;
    if (provider != InferProvider::kCpu) {
      void* const compute_stream = cuda != nullptr && m_stream ? m_stream->native_handle() : nullptr;
      BackendOptions models = m_backend;
      models.memory_limit_bytes = gpu_budget_split(m_backend.memory_limit_bytes).models_bytes;
      if (models.memory_limit_bytes > 0) {
        std::string refused;
        memory_note = models_arena_join(models, session_options, &refused);
        if (!refused.empty()) report_fallback(refused);
      }
      Status st = provider_append(session_options, provider, m_options, models, compute_stream);
      if (!st.is_ok()) return st;
    }
    std::unique_ptr<Ort::Session> session;
    const Errc code = provider == InferProvider::kCpu ? Errc::kInvalidArgument : Errc::kDeviceError;
    const FloatModeScope keep_callers_mode(false);  // ONNX Runtime sets the creating thread's mode too
    Status st = ort_call(code, m_label + ": cannot load the model on the " + infer_provider_name(provider) +
                                   " execution provider", [&] {
      session = std::make_unique<Ort::Session>(ort_env(), m_model.data(), m_model.size(), session_options);
    });
    if (!st.is_ok()) return st;
    m_session = std::move(session);
    m_provider = provider;
    ++m_session_generation;
    m_bound.reset();
    m_halving.reset();  // what fitted one provider's memory says nothing of the next one's
    m_host_backend = &host_backend_for(provider);
    m_device_backend = cuda;
    std::lock_guard<std::mutex> lock(m_report_mutex);
    m_report.provider = infer_provider_name(provider);
    m_report.placement = m_plan.reason + memory_note;
    m_report.batch_limit = 0;
    return Status::ok();
  }

  Status input_check(std::span<const float> input, const std::vector<int64_t>& shape) const {
    return infer_input_check(m_info, m_label, input, shape);
  }

  // Whole batches when dim 0 is symbolic; a model whose batch is fixed at 1 runs item by item.
  Status run_locked(std::span<const float> input, const std::vector<int64_t>& shape, std::vector<Tensor>* outputs,
                    Backend* device) {
    const bool per_item = m_info.inputs[0].shape[0] == 1 && shape[0] > 1;
    if (!per_item) return run_once(input, shape, outputs, device);
    std::vector<int64_t> item_shape = shape;
    item_shape[0] = 1;
    const int64_t item_elements = elements_of(item_shape);
    for (int64_t i = 0; i < shape[0]; ++i) {
      std::vector<Tensor> item;
      KILN_TRY(run_once(input.subspan(i * item_elements, item_elements), item_shape, &item, device));
      KILN_TRY(item_outputs_append(std::move(item), shape[0], m_label, outputs));
    }
    return Status::ok();
  }

  Status run_once(std::span<const float> input, const std::vector<int64_t>& shape, std::vector<Tensor>* outputs,
                  Backend* device) {
    KILN_TRY(injected_fault());
    std::vector<const char*> input_names = {m_input_names[0].c_str()};
    std::vector<const char*> output_names;
    for (const auto& name : m_output_names) output_names.push_back(name.c_str());
    const Errc code = m_provider == InferProvider::kCpu ? Errc::kInvalidArgument : Errc::kDeviceError;
    Status converted;
    // The caller computes part of each run on ONNX Runtime's thread pool: the same float mode as its workers.
    const FloatModeScope float_mode(m_options.flush_denormals && m_provider == InferProvider::kCpu);
    const std::unique_lock<std::mutex> turn = gpu_run_turn();
    Status st = ort_call(code, m_label + ": run on the " + std::string(infer_provider_name(m_provider)) +
                                   " execution provider failed", [&] {
      Ort::Value tensor = Ort::Value::CreateTensor<float>(input_memory(device), const_cast<float*>(input.data()),
                                                          input.size(), shape.data(), shape.size());
      std::vector<Ort::Value> values = m_session->Run(Ort::RunOptions{nullptr}, input_names.data(), &tensor, 1,
                                                      output_names.data(), output_names.size());
      outputs->resize(values.size());
      for (size_t k = 0; k < values.size() && converted.is_ok(); ++k) {
        converted = tensor_from_value(m_output_names[k], values[k], &(*outputs)[k]);
      }
    });
    return st.is_ok() ? converted : st;
  }

  Status warm_up() {
    if (m_options.warmup_runs <= 0 || m_info.inputs.size() != 1) return Status::ok();
    std::vector<int64_t> shape = m_info.inputs[0].shape;
    if (shape.empty()) return Status::ok();
    const bool batch_free = shape[0] < 0;
    std::vector<int64_t> batches{1};
    if (batch_free && m_info.batch_dynamic) {
      // TensorRT without a user profile builds its engine for the shapes it has seen: batch 1 first, then the
      // warm-up batch, so the engine covers every batch up to it (a short last batch, a halved one) from the start.
      const bool tensorrt = m_provider == InferProvider::kTensorRt && m_options.tensorrt.profile_min_shapes.empty();
      batches = tensorrt && m_options.warmup_batch > 1 ? std::vector<int64_t>{1, m_options.warmup_batch}
                                                       : std::vector<int64_t>{m_options.warmup_batch};
    }
    for (const int64_t batch : batches) {
      if (batch_free) shape[0] = batch;
      if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) return Status::ok();
      std::vector<float> zeros(elements_of(shape), 0.0f);
      std::vector<Tensor> outputs;
      for (int i = 0; i < m_options.warmup_runs; ++i) KILN_TRY(run(zeros, shape, &outputs));
    }
    return Status::ok();
  }

  std::vector<uint8_t> m_model;
  std::string m_label;
  InferOptions m_options;
  BackendOptions m_backend;
  InferPlan m_plan;
  size_t m_next_provider = 0;
  ModelInfo m_info;
  std::vector<std::string> m_input_names;
  std::vector<std::string> m_output_names;
  std::string m_folder;           // the model file's folder, for external data; empty for bytes
  // Runs hold it shared; replacing the session (a fallback) holds it alone. Guards m_session, m_provider,
  // m_next_provider, m_session_generation and m_stream.
  std::shared_mutex m_session_mutex;
  uint64_t m_session_generation = 0;  // sessions made so far
  std::mutex m_bound_mutex;          // guards m_bound
  std::mutex m_gpu_run_mutex;        // held through a run on a GPU provider given m_stream
  mutable std::mutex m_report_mutex;
  std::unique_ptr<Stream> m_stream;  // the GPU providers' compute stream; outlives every session made on it
  std::unique_ptr<Ort::Session> m_session;
  InferProvider m_provider = InferProvider::kCpu;
  std::atomic<Backend*> m_host_backend{&BackendRegistry::instance().cpu()};
  std::atomic<Backend*> m_device_backend{nullptr};
  BoundOutputs m_bound;
  OomHalving m_halving;
  InferReport m_report;
};

}  // namespace

static Result<std::unique_ptr<InferSession>> open_session(std::vector<uint8_t> model, const InferOptions& options,
                                                   const std::string& label, const std::string& folder);

Result<std::unique_ptr<InferSession>> InferSession::open_bytes(std::span<const uint8_t> model,
                                                               const InferOptions& options, const std::string& label) {
  return open_session(std::vector<uint8_t>(model.begin(), model.end()), options, label, "");
}

static Result<std::unique_ptr<InferSession>> open_session(std::vector<uint8_t> model, const InferOptions& options,
                                                   const std::string& label, const std::string& folder) {
  auto session = std::make_unique<OrtInferSession>(std::move(model), label, options, folder);
  Status st = session->open();
  if (!st.is_ok()) return st;
  return std::unique_ptr<InferSession>(std::move(session));
}

Result<std::unique_ptr<InferSession>> InferSession::open(const std::string& path, const InferOptions& options) {
  auto bytes = file_read_all(path, INT64_MAX);
  if (!bytes.is_ok()) return Status(bytes.status().code(), "model " + bytes.status().message());
  if (bytes->empty()) return invalid_argument("model " + path + ": the file is empty");
  const std::string folder = std::filesystem::absolute(std::filesystem::path(path)).parent_path().string();
  return open_session(std::move(bytes).value(), options, "model " + path, folder);
}

}  // namespace kiln
