#include "kiln/apps/render.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <ctime>
#include <variant>
#include <vector>
#include <nlohmann/json.hpp>

#include "core/buffer_pool.h"
#include "io/crc32.h"
#include "kiln/exec.h"
#include "pipeline/pipeline.h"
#include "apps/render/image_table.h"
#include "apps/render/jkx_dat_sink.h"
#include "apps/render/render_items.h"
#include "core/thread_pool.h"
#include "io/output_lock.h"
#include "apps/render/preview.h"
#include "profiler/profiler.h"
#include "kiln/version.h"

namespace kiln {

namespace {

// CPU backends render one image at a time and encode it while it is still in cache (L2).
constexpr int64_t kRenderGroup = 1;
// GPU batches rendering at once (each on its own queue/stream), so transfers and kernels overlap with encoding.
constexpr int32_t kGpuBatchesInFlight = 2;

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// CRC-32 of the symbols and each one's row count: a panel with a symbol more, less or of other length differs.
uint32_t panel_fingerprint(const Series& series) {
  Crc32 crc;
  for (size_t k = 0; k < series.symbols.size(); ++k) {
    crc.update(series.symbols[k].data(), series.symbols[k].size() + 1);  // with its terminating NUL
    const int64_t rows = series.symbol_rows[k + 1] - series.symbol_rows[k];
    crc.update(&rows, sizeof(rows));
  }
  return crc.value();
}

DatasetAttributes make_attributes(const RenderJobConfig& config, const Series& series, const WindowPlan& plan) {
  DatasetAttributes a;
  a.seq_len = config.windows.seq_len;
  a.stride = config.windows.stride;
  a.line_width = config.render.line_width;
  a.style = chart_style_name(config.render.style);
  a.width = config.render.width;
  a.height = config.render.height;
  a.dpi = config.dpi;
  a.source = series.source;
  // The column a line chart draws: Close of OHLC data, else the series' own column.
  a.column = chart_style_draws_bars(config.render.style) ? "Open,High,Low,Close"
             : series.price_channels() == 4          ? "Close"
                                                     : series.column;
  a.skipped_windows = plan.skipped_nonfinite;
  a.dropped_no_future = plan.dropped_no_future;
  a.label_horizon = config.windows.label_horizon;
  a.label_threshold = config.windows.label_threshold;
  a.kiln_version = KILN_VERSION_STRING;
  a.config_json = config.output_config_json();
  if (series.is_panel()) {
    // The panel is part of the job's identity: its symbols, their row ranges and its calendar's ends.
    nlohmann::json j = nlohmann::json::parse(a.config_json);
    j["panel"] = {{"symbols", series.symbols.size()},
                  {"rows", series.rows},
                  {"first_date", series.dates.empty() ? 0 : *std::min_element(series.dates.begin(), series.dates.end())},
                  {"last_date", series.dates.empty() ? 0 : *std::max_element(series.dates.begin(), series.dates.end())},
                  {"symbols_crc32", panel_fingerprint(series)}};
    a.config_json = j.dump();
  }
  a.created_at = utc_now_iso8601();
  return a;
}

// Fills sequences / index / labels for images [first, first + count) of the plan.
void fill_metadata(const Series& series, const WindowPlan& plan, const DatasetLayout& layout, int64_t first,
                   int32_t count, EncodedBatch* batch) {
  const int64_t seq = layout.seq_len;
  batch->index.assign(plan.starts.begin() + first, plan.starts.begin() + first + count);
  if (layout.has_labels) batch->labels.assign(plan.labels.begin() + first, plan.labels.begin() + first + count);
  batch->sequences.resize(static_cast<size_t>(count) * seq * layout.seq_channels);
  float* out = batch->sequences.data();
  for (int32_t i = 0; i < count; ++i) {
    const float* row = series.row(plan.starts[first + i]);
    if (layout.seq_channels == series.channels) {
      std::copy(row, row + seq * series.channels, out);
      out += seq * series.channels;
    } else if (layout.seq_channels == series.price_channels()) {  // the prices without the drawn layers
      for (int64_t t = 0; t < seq; ++t) {
        out = std::copy(row + t * series.channels, row + t * series.channels + layout.seq_channels, out);
      }
    } else {
      const int32_t lane = series.line_channel();
      for (int64_t t = 0; t < seq; ++t) *out++ = row[t * series.channels + lane];
    }
  }
}

// A handful of images sampled evenly across the job (or the piece), each captioned with its index in the job's
// dataset (`first_index`: the piece's first): always on the CPU, so a preview never depends on the GPU path.
Status write_preview(const RenderJobConfig& config, const Series& series, const WindowPlan& plan, int64_t first_index,
                     int64_t job_total) {
  const std::vector<int64_t> picked =
      preview_sample(static_cast<int64_t>(plan.starts.size()), config.preview_count);
  const auto count = static_cast<int64_t>(picked.size());
  if (count <= 0) return Status::ok();
  std::vector<int64_t> starts;
  std::vector<std::string> captions;
  for (const int64_t i : picked) {
    starts.push_back(plan.starts[static_cast<size_t>(i)]);
    captions.push_back("window " + std::to_string(first_index + i) + " of " + std::to_string(job_total));
  }
  RenderParams params = config.render;
  params.dtype = PixelType::kU8;
  WindowBatch windows{series.values.data(), series.channels, starts.data(), count,
                      static_cast<int32_t>(config.windows.seq_len)};
  ImageBatch images;
  images.resize(count, params.width, params.height, render_image_channels(params), PixelType::kU8);
  ExecOptions on_cpu;
  on_cpu.mode = ExecMode::kCpu;
  KILN_TRY(op_run(RenderCall(params, windows, images.view()).call(), on_cpu));
  std::vector<ImageView> views;
  for (int64_t i = 0; i < count; ++i) views.push_back(images.view().image(i));
  return preview_write_png(config.preview, views, std::min<int32_t>(4, static_cast<int32_t>(count)), captions);
}

// jkx-dat writes a file per year: a panel's windows (symbol by symbol) regrouped by the year of their last day,
// keeping symbol and date order within a year.
Status plan_group_by_year(const Series& series, int64_t seq_len, WindowPlan* plan) {
  if (series.dates.size() != static_cast<size_t>(series.rows)) return invalid_argument(series.source + ": no dates");
  std::vector<size_t> order(plan->starts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto year = [&](size_t i) { return series.dates[static_cast<size_t>(plan->starts[i] + seq_len - 1)] / 10000; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return year(a) < year(b); });
  std::vector<int64_t> starts(order.size());
  std::vector<int8_t> labels(plan->labels.empty() ? 0 : order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    starts[i] = plan->starts[order[i]];
    if (!labels.empty()) labels[i] = plan->labels[order[i]];
  }
  plan->starts = std::move(starts);
  plan->labels = std::move(labels);
  return Status::ok();
}

// What the defaults that depend on other settings mean for this job: an OHLC chart reads four columns and is
// 4 pixels per bar wide unless a width was set; the output format follows the file name unless set.
RenderJobConfig config_resolve(const RenderJobConfig& requested) {
  RenderJobConfig config = requested;
  if (config.preset != RenderPreset::kNone) {
    // Jiang, Kelly and Xiu: 3 px a day (open tick, high-low bar, close tick), white on black, no anti-aliasing,
    // volume in the bottom fifth below a 2-row gap, the moving average over the image's days.
    const int32_t days = config.preset == RenderPreset::kJkx5 ? 5 : config.preset == RenderPreset::kJkx20 ? 20 : 60;
    config.windows.seq_len = days;
    config.render.style = ChartStyle::kOhlc;
    config.render.width = 3 * days;
    config.render.height = days == 5 ? 32 : days == 20 ? 64 : 96;
    config.render.bar_gap = false;
    config.render.background = 0;
    config.render.ink = config.render.ink_bullish = config.render.ink_bearish = 255;
    config.render.volume = true;
    config.render.volume_height = 0;
    config.render.volume_gap = 2;
    config.render.dtype = PixelType::kU8;
    config.moving_averages = {days};
  }
  config.input.volume = config.render.volume;
  config.render.moving_averages = static_cast<int32_t>(config.moving_averages.size());
  const bool ohlc = chart_style_draws_bars(config.render.style);
  if (ohlc) config.input.ohlc = true;
  const bool encoding = chart_style_is_encoding(config.render.style);
  const auto seq_len = static_cast<int32_t>(config.windows.seq_len);
  if (config.render.width == 0) config.render.width = encoding ? seq_len : ohlc ? 4 * seq_len : 800;
  if (config.render.height == 0) config.render.height = encoding ? seq_len : 500;
  config.output.format = output_format_resolve(config.output.format, config.output.path);
  return config;
}

}  // namespace

std::string RenderJobConfig::output_config_json() const {
  // The declared settings that decide the output's content (not where it goes, how fast, or on what), under their
  // declared names.
  std::vector<const char*> names = {"preset",        "moving_average", "volume",         "volume_column",
                                    "volume_height", "volume_gap",     "bar_gap",
                                    "column",        "ohlc",          "seq_len",         "stride",
                                    "limit",         "label_horizon", "label_threshold", "style",
                                    "width",         "height",        "dpi",             "line_width",
                                    "background",    "ink",           "ink_bullish",     "ink_bearish",
                                    "dtype",         "format",        "compression",     "compression_level",
                                    "images_per_file", "mtf_bins",    "rp_threshold"};
  if (demo) names.push_back("demo_points");
  if (render.color) {  // gray jobs keep the identity they had before colour existed
    for (const char* name : {"color", "color_background", "color_line", "color_up", "color_down", "color_volume_up",
                             "color_volume_down", "color_averages"}) {
      names.push_back(name);
    }
  }
  // Jobs without a panel setting keep the identity they had before panels existed.
  if (!input.symbol_column.empty()) names.push_back("symbol_column");
  if (!input.market_cap_column.empty()) names.push_back("market_cap_column");
  if (missing_days != MissingDays::kSkip) names.push_back("missing_days");
  if (output.format == OutputFormat::kJpeg) names.push_back("jpeg_quality");
  nlohmann::json j;
  j["input"] = series ? series->source : demo ? "demo" : input.path;
  for (const char* name : names) {
    std::visit([&](const auto& value) { j[name] = value; }, render_job_params().get(this, name));
  }
  return j.dump();
}

Result<RenderJobSummary> render_job_run(const RenderJobConfig& requested, const ProgressFn& progress,
                                        const LogFn& log) {
  if (!requested.series && !requested.demo && requested.input.path.empty()) {
    return invalid_argument("no input given (a series file, or demo)");
  }
  if (requested.output.resume && requested.output.overwrite) {
    return invalid_argument("resume and overwrite exclude each other");
  }
  KILN_TRY_ASSIGN(const Shard shard, shard_resolve(requested.shard, env_lookup_process));
  RenderJobConfig config = config_resolve(requested);
  if (shard.is_piece()) {
    if (config.output.format != OutputFormat::kHdf5) {
      return invalid_argument(shard.source + ": a piece of a sharded job is written as HDF5 (joined by kiln merge); " +
                              output_format_name(config.output.format) + " output is for a whole job (--shard none)");
    }
    if (config.output.images_per_file > 0) {
      return invalid_argument(shard.source + ": a piece is one file; --images-per-file does not apply with --shard");
    }
    config.output.path = piece_path(config.output.path, shard);
    if (!config.preview.empty()) config.preview = piece_path(config.preview, shard);  // each piece its own grid
  }
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };

  Series loaded;
  if (!config.series && config.demo) {
    loaded = series_demo(config.demo_points, 20240601, config.render.volume);
  } else if (!config.series) {
    KILN_TRY_ASSIGN(loaded, series_load(config.input));
  }
  if (config.series && config.render.volume && config.series->layers < 1) {
    return invalid_argument(config.series->source + ": --volume needs a series with a volume channel");
  }
  // Missing days are counted (and filled) before the moving averages are computed from the closes.
  const bool fill = config.missing_days == MissingDays::kFill;
  if (config.series && fill) loaded = *config.series;  // an in-memory series is the caller's: filled in a copy
  bool own = !config.series || fill;
  const MissingDaysCount missing =
      series_missing_days_apply(own ? loaded : *config.series, config.missing_days, own ? &loaded : nullptr);
  if (!config.moving_averages.empty()) {
    KILN_TRY_ASSIGN(loaded, series_with_moving_averages(own ? loaded : *config.series, config.moving_averages));
    own = true;
  }
  const Series& series = own ? loaded : *config.series;
  WindowSpec spec = config.windows;
  spec.ohlc = chart_style_draws_bars(config.render.style);
  spec.skip_constant = chart_style_is_encoding(config.render.style);
  if (spec.ohlc && series.price_channels() != 4) {
    return invalid_argument(series.source + ": OHLC bars need Open/High/Low/Close columns (use --ohlc)");
  }
  KILN_TRY_ASSIGN(WindowPlan plan, window_plan(series, spec));
  const bool jkx = config.output.format == OutputFormat::kJkxDat;
  if (jkx && series.is_panel()) KILN_TRY(plan_group_by_year(series, spec.seq_len, &plan));
  const int64_t job_total = static_cast<int64_t>(plan.starts.size());
  if (job_total == 0) {
    return invalid_argument(series.source + ": no window to render (" + std::to_string(plan.skipped_nonfinite) +
                            " skipped for NaN/inf, " + std::to_string(plan.dropped_no_future) +
                            " without a label horizon value)");
  }

  const int32_t seq_len = static_cast<int32_t>(spec.seq_len);
  WindowBatch all_windows{series.values.data(), series.channels, plan.starts.data(), job_total, seq_len};
  KILN_TRY(render_validate(config.render, all_windows));
  // Where the job runs decides the pipeline's shape: placed once, on a call of the job's first window.
  const int64_t first_start = plan.starts.front();
  const IndexRange range = shard.is_piece() ? shard_range(shard.index, shard.count, job_total)
                                            : IndexRange{0, job_total};
  if (shard.is_piece()) {
    plan.starts = std::vector<int64_t>(plan.starts.begin() + range.first, plan.starts.begin() + range.end());
    if (!plan.labels.empty()) {
      plan.labels = std::vector<int8_t>(plan.labels.begin() + range.first, plan.labels.begin() + range.end());
    }
    if (log) {
      log("Rendering " + shard.label() + " (" + shard.source + "): images " + std::to_string(range.first) + ".." +
          std::to_string(range.end() - 1) + " of " + std::to_string(job_total) + " into " + config.output.path);
    }
  }
  const int64_t total = range.count;
  OpExecutor executor(exec_options_make(config.exec, nullptr), log);
  ImageBatch probe_image;
  probe_image.resize(1, config.render.width, config.render.height, render_image_channels(config.render),
                     config.render.dtype);
  const RenderCall probe(config.render, WindowBatch{series.values.data(), series.channels, &first_start, 1, seq_len},
                         probe_image.view());
  KILN_TRY_ASSIGN(const Placement placement, executor.place(probe.call()));
  Backend& backend = *placement.backend;

  DatasetLayout layout;
  layout.total = total;
  layout.width = config.render.width;
  layout.height = config.render.height;
  layout.channels = render_image_channels(config.render);
  layout.dtype = config.render.dtype;
  layout.seq_len = seq_len;
  layout.seq_channels = spec.ohlc ? 4 : 1;
  layout.has_labels = spec.label_horizon > 0;
  layout.first_index = range.first;
  layout.job_total = job_total;
  layout.shard_index = shard.index;
  layout.shard_count = shard.count;

  OutputLock lock;  // one writer per output
  if (!config.output.path.empty()) {
    KILN_TRY_ASSIGN(lock, OutputLock::acquire(config.output.path));
  }
  std::unique_ptr<ImageSink> sink;
  if (jkx) {
    const std::string stock_id = config.demo && !config.series
                                     ? std::string("demo")
                                     : std::filesystem::path(config.input.path).stem().string();
    KILN_TRY_ASSIGN(ImageTable labels, image_table_make(series, plan.starts, seq_len, stock_id));
    KILN_TRY_ASSIGN(sink, jkx_dat_sink_create(config.output, std::move(labels)));
  } else {
    KILN_TRY_ASSIGN(sink, sink_create(config.output));
    if (series.is_panel()) {
      KILN_TRY_ASSIGN(ImageTable table, image_table_make(series, plan.starts, seq_len, ""));
      sink->image_table_set(std::make_shared<const ImageTable>(std::move(table)));
    }
  }
  KILN_TRY_ASSIGN(const int64_t resumed, sink->open(layout, make_attributes(config, series, plan)));
  if (!config.preview.empty()) KILN_TRY(write_preview(config, series, plan, range.first, job_total));

  // Workers beyond the cores only wait on each other at the ordered sink (--threads 16 on 2 cores: 0.6x the rate).
  const int32_t threads = config.exec.threads > 0 ? std::min(config.exec.threads, ThreadPool::hardware_threads())
                                                  : ThreadPool::hardware_threads();
  const int64_t batch_size = std::max<int64_t>(1, config.exec.batch_size);
  const int64_t first_batch_start = std::min(resumed, total);
  const int64_t batch_count = (total - first_batch_start + batch_size - 1) / batch_size;

  RenderJobSummary summary;
  summary.images = total;
  summary.resumed_from = first_batch_start;
  summary.resume_notes = sink->resume_notes();
  summary.rendered = total - first_batch_start;
  summary.skipped_nonfinite = plan.skipped_nonfinite;
  summary.dropped_no_future = plan.dropped_no_future;
  summary.symbols = static_cast<int64_t>(series.symbols.size());
  summary.missing_days = missing.missing;
  summary.absent_days = series.absent_days;
  summary.filled_days = missing.filled;
  summary.backend = backend.name();
  if (log) log(std::string("Rendering mode: ") + (backend.is_gpu() ? "GPU" : "CPU") + " (" + placement.reason + ")");
  summary.placement_reason = placement.reason;
  if (shard.is_piece()) summary.shard = shard.label() + " (" + shard.source + ")";
  summary.threads = threads;

  const size_t image_bytes =
      static_cast<size_t>(layout.width) * layout.height * layout.channels * pixel_type_size(layout.dtype);
  EncoderPool encoders(*sink);

  auto encode_all = [&](const BatchView& view, EncodedBatch& encoded) {
    KILN_PROFILE_SCOPE("encode");
    EncoderPool::Lease encoder = encoders.acquire();
    for (int64_t i = 0; i < view.count; ++i) {
      KILN_TRY(encoder->encode(view.image(i), encoded.bytes));
      encoded.offsets.push_back(encoded.bytes.size());
    }
    return Status::ok();
  };
  auto windows_of = [&](const RenderItem& item, int64_t offset, int64_t count) {
    return WindowBatch{series.values.data(), series.channels, plan.starts.data() + item.first + offset, count, seq_len};
  };
  auto finish_item = [&](RenderItem& item) {
    fill_metadata(series, plan, layout, item.first, item.count, &item.encoded);
    profile_flow_begin("batch", static_cast<uint64_t>(item.first));
  };

  // CPU: one stage renders a few images at a time and encodes each while it is still in cache.
  auto render_and_encode = [&](RenderItem& item) -> Status {
    KILN_PROFILE_SCOPE("batch");
    thread_local ImageBatch images;
    item.encoded.clear();
    for (int64_t g = 0; g < item.count; g += kRenderGroup) {
      const int64_t n = std::min<int64_t>(kRenderGroup, item.count - g);
      images.resize(n, layout.width, layout.height, layout.channels, layout.dtype);
      KILN_TRY(executor.run(RenderCall(config.render, windows_of(item, g, n), images.view()).call()));
      KILN_TRY(encode_all(images.view(), item.encoded));
    }
    finish_item(item);
    return Status::ok();
  };
  // GPU: the whole batch in one call into the backend's pinned/mapped host memory; encoding is its own stage, so
  // the next batches upload and render while this one is compressed.
  auto render_batch = [&](RenderItem& item) -> Status {
    KILN_TRY_ASSIGN(item.host, HostBlock::acquire(backend, item.count * image_bytes));
    const RenderCall call(config.render, windows_of(item, 0, item.count),
                          host_batch_view(item.host, item.count, layout));
    return executor.run(call.call());
  };
  auto encode_batch = [&](RenderItem& item) -> Status {
    item.encoded.clear();
    KILN_TRY(encode_all(host_batch_view(item.host, item.count, layout), item.encoded));
    item.host.reset();
    finish_item(item);
    return Status::ok();
  };

  Pipeline<RenderItem> pipeline;
  if (backend.is_gpu()) {
    KILN_TRY(pipeline.add_stage({"render", kGpuBatchesInFlight, kGpuBatchesInFlight}, render_batch));
    KILN_TRY(pipeline.add_stage({"encode", threads, 2}, encode_batch));
  } else {
    KILN_TRY(pipeline.add_stage({"render+encode", threads, static_cast<size_t>(threads)}, render_and_encode));
  }

  int64_t next_batch = 0;
  EncodedBatchBuffers buffers;
  auto source = [&]() -> std::optional<RenderItem> {
    if (next_batch >= batch_count) return std::nullopt;
    RenderItem item;
    item.encoded = buffers.take();
    item.first = first_batch_start + next_batch * batch_size;
    item.count = static_cast<int32_t>(std::min(batch_size, total - item.first));
    ++next_batch;
    return item;
  };
  int64_t done = first_batch_start;
  auto write = [&](RenderItem&& item) -> Status {
    KILN_PROFILE_SCOPE("write");
    profile_flow_end("batch", static_cast<uint64_t>(item.first));
    item.encoded.first = item.first;
    item.encoded.count = item.count;
    KILN_TRY(sink->write(item.encoded));
    buffers.give_back(std::move(item.encoded));
    done += item.count;
    profile_counter("images written", static_cast<double>(done));
    if (backend.is_gpu()) profile_counter("gpu pool bytes", static_cast<double>(backend.memory_stats().held_bytes));
    if (progress) progress(RenderProgress{done, first_batch_start, total, elapsed(), backend.name()});
    return Status::ok();
  };
  RunOptions run_options;
  run_options.ordered = true;
  run_options.on_error = ErrorPolicy::kFail;  // an image that cannot be rendered or written stops the job
  run_options.sink_queue_capacity = static_cast<size_t>(2 * threads);
  const Status run_status = pipeline.run(source, write, run_options);
  summary.stage_table = pipeline_stats_table(pipeline.stats());
  KILN_TRY(run_status);

  summary.fallbacks = executor.fallbacks();
  summary.fallback_events = executor.events();
  summary.run_report = executor.report_json();
  {
    KILN_PROFILE_SCOPE("finish");
    KILN_TRY(sink->finish(summary.run_report, summary.fallbacks));
  }
  summary.seconds = elapsed();
  summary.output_bytes = sink->bytes_written();
  summary.raw_bytes = image_bytes * static_cast<uint64_t>(summary.images);  // the sink counts resumed bytes too
  if (executor.moved_to_cpu() && backend.is_gpu()) summary.backend += ", then cpu";
  summary.output = sink->describe();
  return summary;
}

}  // namespace kiln
