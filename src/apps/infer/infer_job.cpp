// The inference job on the pipeline: a source of input chunks (batch_size inputs each) -> decode + fused
// preprocess (worker threads) -> one ONNX Runtime session -> the ordered sink, which writes the outputs.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "apps/images/image_batches.h"
#include "core/thread_pool.h"
#include "infer/infer_placement.h"
#include "infer/input_stager.h"
#include "io/tensor_writer.h"
#include "kiln/apps/infer.h"
#include "pipeline/pipeline.h"

namespace kiln {

namespace {

// What the model is fed: per-item geometry and the preprocess that makes it.
struct ModelFeed {
  int32_t width = 0;
  int32_t height = 0;
  Layout layout = Layout::kCHW;
  PreprocessParams params;
  std::vector<int64_t> item_shape;  // (3, H, W) or (H, W, 3)
};

Result<ModelFeed> feed_resolve(const InferJobConfig& config, const std::optional<PackagedModel>& packaged,
                               const ModelInfo& info) {
  if (info.inputs.size() != 1 || info.inputs[0].shape.size() != 4) {
    return invalid_argument("model " + config.model + ": kiln infer feeds one image input of rank 4 (N, C, H, W or "
                            "N, H, W, C); this model has " + std::to_string(info.inputs.size()) + " input(s)" +
                            (info.inputs.empty() ? "" : " of shape " + info.inputs[0].shape_text()));
  }
  const auto& shape = info.inputs[0].shape;
  ModelFeed feed;
  std::string layout = config.layout;
  if (layout == "auto") {
    if (packaged) {
      layout = packaged->input.layout;
    } else if (shape[1] == 3) {
      layout = "nchw";
    } else if (shape[3] == 3) {
      layout = "nhwc";
    } else {
      return invalid_argument("model " + config.model + ": input " + info.inputs[0].shape_text() +
                              " has no dimension of 3 channels; give --layout");
    }
  }
  feed.layout = layout == "nhwc" ? Layout::kHWC : Layout::kCHW;
  const int64_t shape_h = feed.layout == Layout::kCHW ? shape[2] : shape[1];
  const int64_t shape_w = feed.layout == Layout::kCHW ? shape[3] : shape[2];
  feed.width = config.width > 0 ? config.width : packaged ? packaged->input.width : static_cast<int32_t>(shape_w);
  feed.height = config.height > 0 ? config.height : packaged ? packaged->input.height : static_cast<int32_t>(shape_h);
  if (feed.width <= 0 || feed.height <= 0) {
    return invalid_argument("model " + config.model + ": input " + info.inputs[0].shape_text() +
                            " has a symbolic size; give --width and --height");
  }
  if (config.preprocess_from == "flags") {
    feed.params = config.params;
  } else if (packaged) {
    feed.params = model_preprocess_params(packaged->input);
    feed.params.interp = config.params.interp;
    feed.params.fit = config.params.fit;
    std::copy(std::begin(config.params.pad), std::end(config.params.pad), std::begin(feed.params.pad));
  } else {
    feed.params = config.params;
    std::fill(std::begin(feed.params.mean), std::end(feed.params.mean), 0.0f);
    std::fill(std::begin(feed.params.std), std::end(feed.params.std), 1.0f);
    feed.params.scale = 1.0f / 255.0f;
    feed.params.swap_rb = false;
  }
  feed.item_shape = feed.layout == Layout::kCHW ? std::vector<int64_t>{3, feed.height, feed.width}
                                                : std::vector<int64_t>{feed.height, feed.width, 3};
  return feed;
}

// One chunk of inputs on its way through the pipeline.
struct Chunk {
  int64_t first = 0;
  int64_t count = 0;
  std::vector<Status> status;  // per input
  std::vector<int64_t> index;  // per input: its row in the batch, or -1
  int64_t decoded = 0;
  StagedInput input;           // decoded x item elements, float32, where the model reads them
  std::vector<HostTensor> outputs;  // bound: the model writes them in place
  ExecReport preprocess;
};

// The file's values for an output: its integers as the model gave them, floats otherwise.
ArrayValues array_values(TensorType type) {
  return type == TensorType::kUInt8 ? ArrayValues::kU8
         : type == TensorType::kInt32 ? ArrayValues::kI32
         : type == TensorType::kInt64 ? ArrayValues::kI64
                                      : ArrayValues::kFloat;
}

// Every output has one row per image of the chunk, and the same per-item shape in every chunk (`written`: the
// outputs of the first chunk, empty before it).
Status outputs_check(const Chunk& chunk, const std::vector<TensorInfo>& written, const std::string& model) {
  for (size_t k = 0; k < chunk.outputs.size(); ++k) {
    const HostTensor& t = chunk.outputs[k];
    if (t.shape.empty() || t.shape[0] != chunk.decoded) {
      return unsupported_format("model " + model + ": output " + t.name + " has no row per image (shape (" +
                                std::to_string(t.shape.empty() ? 0 : t.shape[0]) + ", ...) for " +
                                std::to_string(chunk.decoded) + " images)");
    }
    if (k < written.size() && !std::equal(t.shape.begin() + 1, t.shape.end(), written[k].shape.begin() + 1,
                                          written[k].shape.end())) {
      return unsupported_format("model " + model + ": output " + t.name + " changes shape between batches");
    }
    if (k < written.size() && written[k].type != (t.exact.empty() ? TensorType::kFloat32 : t.type)) {
      return unsupported_format("model " + model + ": output " + t.name + " changes type between batches");
    }
  }
  return Status::ok();
}

// Images given decoded (not files) are fed as they are: u8 RGB in host memory.
Status decoded_images_check(const ImageBatches& batches, const VarShapeBatchView& images) {
  if (batches.from_files()) return Status::ok();
  if (images.space != MemorySpace::kHost) return invalid_argument("infer: decoded images must be in host memory");
  for (int64_t i = 0; i < images.count; ++i) {
    const ImageView& image = images[i];
    if (image.type != PixelType::kU8 || image.layout != Layout::kHWC || image.channels != 3) {
      return invalid_argument("infer: image " + batches.name(i) + " is not u8 RGB (HWC, 3 channels)");
    }
  }
  return Status::ok();
}

InferOptions infer_options_make(const InferJobConfig& config) {
  InferOptions options;
  options.mode = config.exec.mode;
  options.gpu_only = config.exec.gpu_only;
  options.fallback_on_error = config.exec.fallback_on_error;
  options.threads = config.exec.threads;
  options.gpu_provider = config.provider == "tensorrt" ? InferProvider::kTensorRt : InferProvider::kCuda;
  options.tensorrt = config.tensorrt;
  options.warmup_batch = config.exec.batch_size;
  // A plan of the CPU provider alone runs at most kInferCpuBatch inputs at a time: warm up at that, not at a batch
  // no run will have.
  const auto plan = infer_plan(options, BackendRegistry::instance());
  if (plan.is_ok() && !plan.value().providers.empty() && plan.value().providers.front() == InferProvider::kCpu) {
    options.warmup_batch = std::min(config.exec.batch_size, kInferCpuBatch);
  }
  options.spin_wait = false;  // decode and preprocess run beside the model on the same cores
  return options;
}

}  // namespace

const ParamTable<InferJobConfig>& infer_job_params() {
  static const ParamTable<InferJobConfig> table = [] {
    using C = InferJobConfig;
    ParamTable<C> t;
    t.add({.name = "model", .help = "A packaged model's name (kiln models) or an .onnx file", .required = true},
          [](C& c) -> std::string& { return c.model; });
    t.add({.name = "output", .help = "Write the outputs here: .npy (the first output), .npz or .h5 (every output)"},
          [](C& c) -> std::string& { return c.output; });
    t.add({.name = "width", .help = "Model input width", .min = 0, .max = 1 << 15, .default_text = "the model's"},
          [](C& c) -> int32_t& { return c.width; });
    t.add({.name = "height", .help = "Model input height", .min = 0, .max = 1 << 15, .default_text = "the model's"},
          [](C& c) -> int32_t& { return c.height; });
    t.add_string_choice({.name = "layout", .help = "Model input layout", .choices = {"auto", "nchw", "nhwc"}},
                     [](C& c) -> std::string& { return c.layout; });
    t.add_string_choice({.name = "preprocess_from",
                      .help = "model: the packaged model's scale, mean, std and channel order; flags: the flags below",
                      .choices = {"model", "flags"}},
                     [](C& c) -> std::string& { return c.preprocess_from; });
    t.include(preprocess_params(), [](C& c) -> PreprocessParams& { return c.params; });
    t.add_string_choice({.name = "provider", .help = "GPU execution provider tried first", .choices = {"cuda", "tensorrt"}},
                     [](C& c) -> std::string& { return c.provider; });
    t.add({.name = "trt_fp16", .help = "TensorRT: allow fp16"}, [](C& c) -> bool& { return c.tensorrt.fp16; });
    t.add({.name = "trt_int8", .help = "TensorRT: int8 (with --trt-int8-calibration-table)"},
          [](C& c) -> bool& { return c.tensorrt.int8; });
    t.add({.name = "trt_int8_calibration_table", .help = "TensorRT: int8 calibration table file"},
          [](C& c) -> std::string& { return c.tensorrt.int8_calibration_table; });
    t.add({.name = "trt_engine_cache", .help = "TensorRT: engine cache folder"},
          [](C& c) -> std::string& { return c.tensorrt.engine_cache_dir; });
    t.add({.name = "trt_timing_cache", .help = "TensorRT: timing cache folder"},
          [](C& c) -> std::string& { return c.tensorrt.timing_cache_dir; });
    t.add({.name = "trt_profile_min_shapes", .help = "TensorRT profile, e.g. input:1x3x512x512"},
          [](C& c) -> std::string& { return c.tensorrt.profile_min_shapes; });
    t.add({.name = "trt_profile_opt_shapes", .help = "TensorRT profile, e.g. input:4x3x512x512"},
          [](C& c) -> std::string& { return c.tensorrt.profile_opt_shapes; });
    t.add({.name = "trt_profile_max_shapes", .help = "TensorRT profile, e.g. input:8x3x512x512"},
          [](C& c) -> std::string& { return c.tensorrt.profile_max_shapes; });
    file_job_params_add(t);
    return t;
  }();
  return table;
}

Result<InferJobSummary> infer_job_run(const InferJobConfig& config, const ImageInputs& inputs,
                                      const JobEvents<ImageRecord>& events) {
  if (config.model.empty()) return invalid_argument("infer: no model given");
  if (config.output.empty()) return invalid_argument("infer: no output given");
  KILN_TRY(tensor_file_format_from_path(config.output).status());
  KILN_TRY_ASSIGN(const ImageBatches batches, ImageBatches::make(inputs));
  KILN_TRY(decoded_images_check(batches, inputs.images));

  std::optional<PackagedModel> packaged;
  KILN_TRY_ASSIGN(const std::string model_path, model_path_resolve(config.model));
  if (model_path != config.model) {
    auto model = packaged_model(config.model);
    if (!model.is_ok()) return model.status();
    packaged = std::move(model).value();
  }
  KILN_TRY_ASSIGN(std::unique_ptr<InferSession> session, InferSession::open(model_path, infer_options_make(config)));
  KILN_TRY_ASSIGN(const ModelFeed feed, feed_resolve(config, packaged, session->info()));

  const auto started = std::chrono::steady_clock::now();
  ThreadPool pool(config.exec.threads);
  OpExecutor executor(exec_options_make(config.exec, &pool), events.log);
  DecodeOptions decode = file_job_decode_options(config, 3);
  decode.min_width = feed.width;  // JPEGs decode at a reduced DCT scale when the model input is much smaller
  decode.min_height = feed.height;

  Pipeline<Chunk> pipeline;
  // On the CPU provider the model shares the cores with decoding (half each); a GPU provider leaves them all to it.
  const bool model_on_cpu = session->report().provider == "cpu";
  const int32_t decoders = std::max(1, static_cast<int32_t>(pool.size()) / (model_on_cpu ? 2 : 1));
  InputStager stager(*session, executor, feed.params, feed.width, feed.height, feed.layout);
  KILN_TRY(pipeline.add_stage({"decode_preprocess", decoders, 2}, [&](Chunk& chunk) -> Status {
    DecodedBatch batch = batches.take(chunk.first, chunk.count, decode, nullptr);
    chunk.status = std::move(batch.status);
    chunk.index = std::move(batch.index);
    chunk.decoded = batch.images.count();
    if (chunk.decoded == 0) return Status::ok();
    return stager.stage(batch.images.view(), &chunk.input, &chunk.preprocess);
  }));
  KILN_TRY(pipeline.add_stage({"infer", 1, 2}, [&](Chunk& chunk) -> Status {
    if (chunk.decoded == 0) return Status::ok();
    Status st = stager.run(chunk.input, &chunk.outputs);
    chunk.input.reset();
    return st;
  }));

  InferJobSummary summary;
  summary.input_shape = feed.item_shape;
  summary.model_batch = model_on_cpu ? std::min(config.exec.batch_size, kInferCpuBatch) : config.exec.batch_size;
  TensorWriter writer;
  const bool first_only = tensor_file_format_from_path(config.output).value() == TensorFileFormat::kNpy;
  int64_t next = 0;
  const auto source = [&]() -> std::optional<Chunk> {
    if (next >= batches.count()) return std::nullopt;
    Chunk chunk;
    chunk.first = next;
    chunk.count = std::min(summary.model_batch, batches.count() - next);
    next += chunk.count;
    return chunk;
  };
  const auto sink = [&](Chunk&& chunk) -> Status {
    if (chunk.decoded > 0) KILN_TRY(outputs_check(chunk, summary.outputs, config.model));
    if (chunk.decoded > 0 && summary.preprocess.empty()) summary.preprocess = chunk.preprocess.backend;
    if (chunk.decoded > 0 && !writer.is_open()) {
      std::vector<TensorArraySpec> arrays;
      for (const HostTensor& t : chunk.outputs) {
        arrays.push_back({t.name, std::vector<int64_t>(t.shape.begin() + 1, t.shape.end()), t.exact.empty() ? ArrayValues::kFloat : array_values(t.type)});
        summary.outputs.push_back(TensorInfo{t.name, t.exact.empty() ? TensorType::kFloat32 : t.type, t.shape, {}});
        if (first_only) break;
      }
      KILN_TRY(writer.open_arrays(config.output, arrays, PixelType::kF32));
    }
    const std::string provider = session->report().provider;  // once per chunk: a fallback changes it between runs
    for (int64_t i = 0; i < chunk.count; ++i) {
      ImageRecord record;
      record.name = batches.name(chunk.first + i);
      const int64_t k = chunk.index[static_cast<size_t>(i)];
      if (k < 0) {
        record.error = chunk.status[static_cast<size_t>(i)].message();
        ++summary.unreadable;
      } else {
        record.ok = true;
        record.backend = provider;
        std::vector<const void*> rows;
        for (size_t a = 0; a < (first_only ? 1 : chunk.outputs.size()); ++a) {
          const HostTensor& t = chunk.outputs[a];
          const int64_t row = t.elements() / t.shape[0];
          if (t.exact.empty()) rows.push_back(t.data() + k * row);
          else rows.push_back(t.exact.data() + static_cast<size_t>(k * row) * tensor_type_exact_size(t.type));
        }
        KILN_TRY(writer.append(rows, 1));
        summary.names.push_back(record.name);
        ++summary.written;
      }
      if (events.record) events.record(record);
    }
    if (events.progress) events.progress(chunk.first + chunk.count, batches.count(), provider);
    return Status::ok();
  };
  RunOptions run_options;
  run_options.ordered = true;
  run_options.on_error = ErrorPolicy::kFail;
  KILN_TRY(pipeline.run(source, sink, run_options));
  if (summary.written == 0) {
    return io_error("none of the " + std::to_string(batches.count()) + " inputs could be read");
  }
  for (TensorInfo& t : summary.outputs) t.shape[0] = summary.written;
  TensorAttributes attributes;
  attributes.text = {{"model", config.model}, {"provider", session->report().provider}};
  KILN_TRY(writer.finish(summary.names, attributes));
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  summary.report = session->report();
  summary.model_input = stager.where(summary.report);
  return summary;
}

}  // namespace kiln
