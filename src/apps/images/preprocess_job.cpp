// The preprocess job: decode (RGB) in batches, run the fused preprocess op into the output's memory, and append the
// items to a .npy/.h5 tensor written crash-safely (or to the caller's memory).
#include <chrono>
#include <mutex>
#include <vector>

#include "apps/images/image_batches.h"
#include "core/thread_pool.h"
#include "io/tensor_writer.h"
#include "kiln/apps/images.h"

namespace kiln {

namespace {

TensorAttributes tensor_attributes(const PreprocessJobConfig& c, const PreprocessJobSummary& s) {
  const PreprocessParams& p = c.params;
  TensorAttributes a;
  a.text = {{"layout", layout_name(c.layout)},
            {"dtype", pixel_type_name(c.dtype)},
            {"interp", interp_name(p.interp)},
            {"fit", p.fit == ResizeFit::kLetterbox ? "letterbox" : "stretch"},
            {"channel_order", p.swap_rb ? "bgr" : "rgb"},
            {"backend", s.backend}};
  a.numbers = {{"size", {static_cast<double>(c.width), static_cast<double>(c.height)}},
               {"scale", {p.scale}},
               {"mean", {p.mean[0], p.mean[1], p.mean[2]}},
               {"std", {p.std[0], p.std[1], p.std[2]}},
               {"pad", {p.pad[0]}},
               {"skipped", {static_cast<double>(s.unreadable)}}};
  return a;
}

}  // namespace

const ParamTable<PreprocessJobConfig>& preprocess_job_params() {
  static const ParamTable<PreprocessJobConfig> table = [] {
    using C = PreprocessJobConfig;
    ParamTable<C> t;
    t.add({.name = "width", .help = "Output width in pixels", .min = 1, .max = 1 << 15, .required = true},
          [](C& c) -> int32_t& { return c.width; });
    t.add({.name = "height", .help = "Output height in pixels", .min = 1, .max = 1 << 15, .required = true},
          [](C& c) -> int32_t& { return c.height; });
    t.add_choice({.name = "layout", .help = "Output layout", .choices = {"chw", "hwc"}},
                 [](C& c) -> Layout& { return c.layout; }, kLayoutNames, "layout");
    t.add_choice({.name = "dtype", .help = "Output type", .choices = {"float32", "float16"}},
                 [](C& c) -> PixelType& { return c.dtype; }, pixel_type_parse, pixel_type_name);
    t.include(preprocess_params(), [](C& c) -> PreprocessParams& { return c.params; });
    t.add({.name = "output", .help = "Write the (N, ...) tensor to this .npy or .h5 file"},
          [](C& c) -> std::string& { return c.output; });
    file_job_params_add(t);
    return t;
  }();
  return table;
}

Result<PreprocessJobSummary> preprocess_job_run(const PreprocessJobConfig& config, const ImageInputs& inputs,
                                                const TensorMemory* memory, const JobEvents<ImageRecord>& events) {
  if (config.width <= 0 || config.height <= 0) return invalid_argument("preprocess: width and height are required");
  if (config.dtype != PixelType::kF32 && config.dtype != PixelType::kF16) {
    return invalid_argument("preprocess: dtype must be float32 or float16");
  }
  if (config.output.empty() && (memory == nullptr || !*memory)) return invalid_argument("preprocess: no output given");
  KILN_TRY_ASSIGN(const ImageBatches batches, ImageBatches::make(inputs));
  // Files decode as RGB; caller images keep their channels, which must be the same for all.
  const int32_t channels = batches.from_files() ? 3 : inputs.images[0].channels;
  for (int64_t i = 0; i < inputs.images.count; ++i) {
    if (inputs.images[i].channels != channels) return invalid_argument("preprocess: every image needs the same channels");
  }

  PreprocessJobSummary summary;
  summary.item_shape = config.layout == Layout::kCHW ? std::vector<int64_t>{channels, config.height, config.width}
                                                     : std::vector<int64_t>{config.height, config.width, channels};
  TensorWriter writer;
  if (!config.output.empty()) KILN_TRY(writer.open(config.output, summary.item_shape, config.dtype));

  const auto started = std::chrono::steady_clock::now();
  ThreadPool pool(config.exec.threads);
  OpExecutor executor(exec_options_make(config.exec, &pool), events.log);
  DecodeOptions decode = file_job_decode_options(config, 3);
  const ImageShape item{config.width, config.height, channels, config.dtype, config.layout};

  // Items go straight to the caller's memory, or through a batch of their own (one per slot) to the file.
  VarShapeBatch out[2];
  std::mutex memory_mutex;  // the caller's TensorMemory is asked from one thread at a time
  const auto run = [&](const DecodedBatch& batch, BatchSlot where, ExecReport* report) {
    const int64_t decoded = batch.images.count();
    VarShapeBatch& outputs = out[where.slot];
    if (config.output.empty()) {
      std::vector<ImageView> views;
      std::lock_guard<std::mutex> lock(memory_mutex);
      for (int64_t k = 0; k < decoded; ++k) {
        views.push_back(image_view_packed((*memory)(where.decoded_before + k), item.width, item.height, item.channels,
                                          item.type, item.layout));
      }
      outputs = VarShapeBatch::wrap(std::move(views));
    } else {
      outputs = VarShapeBatch::allocate(std::vector<ImageShape>(static_cast<size_t>(decoded), item));
    }
    return executor.run(OpCall{OpKind::kPreprocess, &config.params, batch.images.view(), outputs.view(), nullptr},
                        report);
  };
  const auto keep = [&](ImageRecord& record, int64_t k, int slot) -> Status {
    if (k < 0) {
      ++summary.unreadable;
      return Status::ok();
    }
    if (!config.output.empty()) KILN_TRY(writer.append(out[slot][k].data, 1));
    summary.names.push_back(record.name);
    ++summary.written;
    return Status::ok();
  };
  KILN_TRY(image_batches_run<ImageRecord>(batches, config.exec.batch_size, decode, &pool, events, &summary.backend,
                                          &summary.placement, run, keep));
  if (summary.written == 0) {
    return io_error("none of the " + std::to_string(batches.count()) + " inputs could be read");
  }
  if (!config.output.empty()) KILN_TRY(writer.finish(summary.names, tensor_attributes(config, summary)));
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  summary.fallbacks = executor.fallbacks();
  summary.fallback_events = executor.events();
  return summary;
}

}  // namespace kiln
