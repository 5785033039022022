// Neural-network inference with ONNX Runtime: a session runs an ONNX model on batches, on the CPU execution
// provider or on CUDA / TensorRT, placed like the image ops (mode auto|gpu|cpu, GPU_BACKEND, GPU_DEVICE_ID,
// GPU_MEMORY_LIMIT_GB) and falling back to the CPU provider, with the reason reported, when a GPU provider cannot
// load or fails while running.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/device.h"
#include "kiln/enum_names.h"
#include "kiln/ops/preprocess.h"
#include "kiln/status.h"

namespace kiln {

enum class InferProvider : uint8_t { kCpu = 0, kCuda, kTensorRt };
inline constexpr EnumName<InferProvider> kInferProviderNames[] = {
    {InferProvider::kCpu, "cpu"}, {InferProvider::kCuda, "cuda"}, {InferProvider::kTensorRt, "tensorrt"}};
inline const char* infer_provider_name(InferProvider p) { return enum_name(kInferProviderNames, p); }

// Element types kiln passes to and from models.
enum class TensorType : uint8_t { kFloat32 = 0, kUInt8, kInt32, kInt64, kOther };
inline constexpr EnumName<TensorType> kTensorTypeNames[] = {{TensorType::kFloat32, "float32"},
                                                            {TensorType::kUInt8, "uint8"},
                                                            {TensorType::kInt32, "int32"},
                                                            {TensorType::kInt64, "int64"},
                                                            {TensorType::kOther, "other"}};
inline const char* tensor_type_name(TensorType t) { return enum_name(kTensorTypeNames, t); }

// One input or output of a model. A dimension of -1 is symbolic; dim_names holds its name ("N", "batch", "").
struct TensorInfo {
  std::string name;
  TensorType type = TensorType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
  std::string shape_text() const;  // "N x 3 x 256 x 256"
};

struct ModelInfo {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  // Every input's dim 0 is symbolic: whole batches run at once. Otherwise a batch runs one item at a time.
  bool batch_dynamic = false;
};

// A dense tensor, row-major: data holds its values as float32; an integer output (uint8, int32, int64) also keeps
// them exactly, in its own type, in `exact` (little-endian, elements() of them).
struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
  TensorType type = TensorType::kFloat32;
  std::vector<uint8_t> exact{};
  int64_t elements() const;
};

// Bytes of one element of an integer type (0 for float32 and other).
inline size_t tensor_type_exact_size(TensorType type) {
  return type == TensorType::kUInt8 ? 1 : type == TensorType::kInt32 ? 4 : type == TensorType::kInt64 ? 8 : 0;
}

// TensorRT execution-provider settings (used when provider tensorrt is asked for).
struct TensorRtOptions {
  bool fp16 = false;
  bool int8 = false;
  std::string int8_calibration_table;  // with int8
  std::string engine_cache_dir;        // "" = no engine cache
  std::string timing_cache_dir;        // "" = no timing cache
  // Optimization profile per input, "name:1x3x512x512,..." (ORT's syntax); "" = taken from the batch sizes run.
  std::string profile_min_shapes;
  std::string profile_opt_shapes;
  std::string profile_max_shapes;
};

struct InferOptions {
  ExecMode mode = ExecMode::kAuto;  // gpu: a GPU provider or an error; cpu: the CPU provider only
  std::optional<BackendKind> gpu_only{};  // GPU_BACKEND: opencl means the CPU provider (ORT has no OpenCL one)
  // The GPU provider to try first in modes auto and gpu: cuda, or tensorrt (then cuda, then the CPU).
  InferProvider gpu_provider = InferProvider::kCuda;
  bool fallback_on_error = true;  // a GPU provider failing at run time reruns on the CPU provider (not in mode gpu)
  int32_t threads = 0;            // intra-op threads of the CPU provider; 0 = all cores
  // ONNX Runtime's intra-op threads spin between runs by default; a job whose other stages share the cores turns
  // this off so that the spinning does not take their time.
  bool spin_wait = true;
  // Subnormal floats are computed as zero on the CPU provider (flush-to-zero and denormals-are-zero in ONNX
  // Runtime's threads and in the caller's during a run), as GPUs and TensorRT do: a model with subnormal weights
  // (fr_feature has 8,938) otherwise runs about 10x slower on x86.
  bool flush_denormals = true;
  int32_t warmup_runs = 1;        // runs on zeros at open, so that the first real batch is not the slow one
  int64_t warmup_batch = 1;
  TensorRtOptions tensorrt;
};

// What a session runs on and what happened to it.
struct InferReport {
  std::string provider;                 // "cpu", "cuda", "tensorrt": who runs the model now
  std::string placement;                // why that provider was chosen
  std::vector<std::string> fallbacks;   // each provider that was given up, with the reason
  bool batch_dynamic = false;
  int64_t bound_runs = 0;  // runs whose outputs ONNX Runtime wrote in place (run_bound's others were copied)
  int64_t device_input_runs = 0;  // runs whose input the provider read in place from device memory
  int64_t device_output_runs = 0;  // run_to_device calls: outputs written to device memory, left there
  int64_t oom_halvings = 0;  // batches (run or run_bound) that ran out of memory and were run in halves
  int64_t batch_limit = 0;   // the largest batch known to fit after running out of memory (0: none found)
  std::string json() const;
};

struct HostTensor;  // src/infer/host_tensor.h: pooled host memory for bound inputs and outputs
struct DeviceTensor;  // src/infer/device_tensor.h: outputs left in device memory

class InferSession {
 public:
  // Loads a model from a file. InvalidArgument with the file's name for a missing, truncated or non-ONNX file.
  static Result<std::unique_ptr<InferSession>> open(const std::string& path, const InferOptions& options = {});
  static Result<std::unique_ptr<InferSession>> open_bytes(std::span<const uint8_t> model, const InferOptions& options = {},
                                                          const std::string& label = "model bytes");
  virtual ~InferSession() = default;

  virtual const ModelInfo& info() const = 0;
  virtual InferReport report() const = 0;

  // Runs one batch of the model's first input: `input` holds shape[0] items of the input's per-item shape
  // (its dims after the first; symbolic ones taken from `shape`). Outputs come back in the model's order, batch
  // first. InvalidArgument when the rank or a fixed dimension does not match the model's input. A batch that runs
  // out of memory is run in halves, as run_bound describes (both runs share what fitted).
  virtual Status run(std::span<const float> input, const std::vector<int64_t>& shape, std::vector<Tensor>* outputs) = 0;

  // The backend whose host memory this session's provider reads and writes fastest: CUDA's pinned pool while the
  // session runs on the CUDA or TensorRT provider, the CPU's pool otherwise. Inputs for run_bound are best kept here.
  virtual Backend& host_backend() const = 0;
  // As run(), with the outputs bound to pooled host memory: ONNX Runtime writes each output into its HostTensor in
  // place. `outputs` is reused when it holds blocks large enough (a caller cycling its tensors allocates nothing
  // after the first batches); missing or smaller blocks are acquired from host_backend(). The first batch of an
  // input size, a model run item by item and a model whose outputs are not float32 with one row per item are run
  // unbound and copied into `outputs`. A batch that runs out of memory (the provider's allocator, or
  // KILN_FAULT=provider_oom:N) is run in halves, halved again as needed, and batches larger than the largest that
  // fitted are split from then on (report().batch_limit); a single item that does not fit falls back like a failure.
  virtual Status run_bound(std::span<const float> input, const std::vector<int64_t>& shape,
                           std::vector<HostTensor>* outputs) = 0;

  // The backend whose device memory the session's provider reads in place: kiln's CUDA backend (same device,
  // GPU_DEVICE_ID) while the session runs on the CUDA or TensorRT provider; nullptr on the CPU provider. A batch
  // preprocessed into a DeviceBlock of it reaches the model without a copy through the host. The GPU providers run
  // on a kiln stream of that backend (ONNX Runtime's user compute stream).
  virtual Backend* device_backend() const = 0;
  // As run_bound, with `input` in device memory of `device` (written and waited for: kiln's calls return once their
  // results are there). A session that has meanwhile fallen back to the CPU provider copies the input to host
  // memory first.
  virtual Status run_bound_from_device(std::span<const float> input, Backend& device,
                                       const std::vector<int64_t>& shape, std::vector<HostTensor>* outputs) = 0;
  // As run_bound, with the outputs bound to device memory of device_backend() and left there (an item's consumer
  // reads them in place); `input_device`: the backend whose device memory holds `input` (it must be
  // device_backend()), or nullptr for host memory. Only where binding is known to work: NotImplemented, with the
  // reason, on the CPU provider, for a model run item by item, before a run_bound of this input size has learned
  // the outputs' shapes, for outputs that are not float32 with one row per item, or for a batch larger than one
  // that ran out of memory; the caller runs run_bound
  // instead (which learns them). Nothing is halved or falls back here: OutOfMemory and a provider's failure come
  // back as they are, and the caller's run_bound of the same batch halves it or moves to the next provider.
  virtual Status run_to_device(std::span<const float> input, Backend* input_device, const std::vector<int64_t>& shape,
                               std::vector<DeviceTensor>* outputs) = 0;
};

// The ONNX Runtime library kiln runs with: its version and the execution providers it was built with.
struct OnnxRuntimeInfo {
  std::string version;
  std::vector<std::string> providers;  // ORT's names, e.g. CPUExecutionProvider, CUDAExecutionProvider
};
OnnxRuntimeInfo onnxruntime_info();

// A batch of `batch` items of the model's first input for benchmarks: symbolic dimensions after the first are 1,
// values uniform in [-1, 1) drawn from `seed`. *shape receives the batch's shape.
std::vector<float> infer_random_input(const ModelInfo& info, int64_t batch, uint32_t seed, std::vector<int64_t>* shape);

// Why each provider can or cannot run here (for kiln devices): {provider, ok, reason}.
struct ProviderStatus {
  InferProvider provider;
  bool available = false;
  std::string reason;
};
std::vector<ProviderStatus> infer_provider_statuses();

// The models kiln packages (models/catalog.json, built by make deps).
struct ModelInput {
  std::string name;
  std::string layout = "nchw";  // nchw | nhwc
  int32_t width = 0;
  int32_t height = 0;
  bool bgr = false;
  float scale = 1.0f;
  std::vector<float> mean;
  std::vector<float> std;
};

struct ModelOutput {
  std::string name;
  std::string meaning;
};

struct PackagedModel {
  std::string name;
  std::string task;
  std::string file;     // full path
  std::string licence;
  std::string source;   // npm package@version
  int64_t bytes = 0;
  std::string sha256;
  ModelInput input;
  std::vector<ModelOutput> outputs;
};

// The fused preprocess that makes a packaged model's input from u8 RGB images: its size is the model's
// width x height, the output layout CHW for nchw models and HWC for nhwc, float32.
PreprocessParams model_preprocess_params(const ModelInput& input);
Layout model_input_layout(const ModelInput& input);

// The folder of packaged models: KILN_MODELS, else <prefix>/share/kiln/models next to an installed kiln, else the
// build's cache (KILN_CACHE/models).
std::string model_dir();
// Every packaged model; IoError naming the catalog and `make deps` when it is missing.
Result<std::vector<PackagedModel>> packaged_models();
// A packaged model by name; InvalidArgument listing the names when unknown, IoError naming the file and the
// command that fetches it when its file is missing.
Result<PackagedModel> packaged_model(const std::string& name);
// A model argument: a packaged model's name, or a path to an .onnx file.
Result<std::string> model_path_resolve(const std::string& name_or_path);

}  // namespace kiln
