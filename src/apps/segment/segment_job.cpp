// The segment job: one reader thread per input -> kiln's dynamic batcher (every input shares it; latency inputs
// carry a deadline and are dropped, counted, when they go stale) -> one inference thread (fused preprocess of the
// batch, then the model) -> one writer thread per input, which takes its frames back in order, smooths them in
// time, renders the output frame and encodes it. Each input has a budget of frames in flight, so memory stays flat
// and a slow encoder holds its reader back. With the profiler on (kiln --trace), every frame is one flow from its
// read to its encode across the threads.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "apps/segment/frame_matte.h"
#include "apps/segment/frame_source.h"
#include "apps/segment/mask_temporal.h"
#include "apps/segment/segment_model.h"
#include "core/thread_pool.h"
#include "io/tensor_writer.h"
#include "io/video/video_writer.h"
#include "kiln/apps/segment.h"
#include "kiln/image_ops.h"
#include "pipeline/batcher.h"
#include "profiler/profiler.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int64_t now_ns() { return profile_now_ns(); }

struct FrameTask {
  int32_t stream = 0;
  VideoFrame frame;
  int64_t arrived_ns = 0;  // when the source delivered it: latency counts from here
  std::vector<float> prob;
  int32_t prob_width = 0, prob_height = 0;
  bool dropped = false;
};

struct StageClock {
  const char* name;
  std::atomic<int64_t> busy_ns{0};
  int32_t threads = 1;
};

class StageTimer {
 public:
  StageTimer(StageClock& clock) : m_clock(clock), m_begin(now_ns()), m_scope(clock.name) {}
  ~StageTimer() { m_clock.busy_ns += now_ns() - m_begin; }

 private:
  StageClock& m_clock;
  int64_t m_begin;
  ProfileScope m_scope;
};

struct Stream {
  int32_t id = 0;
  std::unique_ptr<FrameSource> source;
  VideoInfo info;
  SegmentStreamSummary summary;
  std::string output;

  std::mutex mutex;
  std::condition_variable cv;
  std::map<int64_t, FrameTask> ready;  // by frame index
  int64_t total = -1;                   // frames read, once the source has ended
  int64_t in_flight = 0;                // read and not yet written
  int64_t in_flight_limit = 8;
  int64_t timeout_us = 0;               // latency: the stale limit

  std::vector<float> state;  // the temporally smoothed probability
  FrameMatte matte;
  int32_t matte_prob_width = 0, matte_prob_height = 0;
  MatteRegion region;        // in model-input pixels
  std::unique_ptr<VideoWriter> video;
  TensorWriter arrays;
  std::vector<std::string> names;
  double foreground_sum = 0;
  std::vector<int64_t> latencies_ns;
};

SegmentOutput output_kind(const std::string& name) {
  for (const auto& [kind, text] : kSegmentOutputNames) {
    if (name == text) return kind;
  }
  return SegmentOutput::kMask;
}

const char* output_extension(SegmentOutput kind) {
  switch (kind) {
    case SegmentOutput::kAlpha: return ".webm";
    case SegmentOutput::kNpy: return ".npy";
    case SegmentOutput::kH5: return ".h5";
    default: return ".mp4";
  }
}

bool is_array_output(SegmentOutput kind) { return kind == SegmentOutput::kNpy || kind == SegmentOutput::kH5; }

// -o names the file itself for one input when it has an extension; otherwise it is a folder with one output per
// input, named after the input (a clash gets -1, -2 ...).
Result<std::vector<std::string>> output_paths(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                              SegmentOutput kind) {
  if (config.output_dir.empty()) return invalid_argument("segment: give an output (-o FILE or FOLDER)");
  std::vector<std::string> paths;
  const fs::path out(config.output_dir);
  if (inputs.size() == 1 && out.has_extension() && !fs::is_directory(out)) {
    paths.push_back(config.output_dir);
  } else {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) return io_error(config.output_dir + ": cannot create the folder: " + ec.message());
    std::set<std::string> taken;
    for (const std::string& input : inputs) {
      fs::path in(input);
      std::string stem = frame_source_is_sequence(input) ? in.parent_path().filename().string() : in.stem().string();
      if (fs::is_directory(in)) stem = fs::absolute(in).lexically_normal().filename().string();
      if (stem.empty() || stem == "." || stem == "/") stem = "sequence";
      std::string name = stem + output_extension(kind);
      for (int k = 1; taken.count(name) != 0; ++k) name = stem + "-" + std::to_string(k) + output_extension(kind);
      taken.insert(name);
      paths.push_back((out / name).string());
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::error_code ec;
    if (fs::exists(inputs[i], ec) && fs::exists(paths[i], ec) && fs::equivalent(inputs[i], paths[i], ec)) {
      return invalid_argument(paths[i] + ": the output would overwrite its input");
    }
  }
  return paths;
}

double percentile_ms(std::vector<int64_t> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t k = std::min(values.size() - 1, static_cast<size_t>(std::ceil(q * values.size())) - (q > 0 ? 1 : 0));
  return static_cast<double>(values[k]) / 1e6;
}

class SegmentRun {
 public:
  SegmentRun(const SegmentJobConfig& config, const SegmentProgressFn& on_progress, const LogFn& log)
      : m_config(config), m_on_progress(on_progress), m_log(log), m_pool(config.exec.threads),
        m_executor(exec_options_make(config.exec, &m_pool), log) {}

  Status open(const std::vector<std::string>& inputs) {
    if (inputs.empty()) return invalid_argument("segment: no input");
    m_kind = output_kind(m_config.output);
    m_latency = m_config.pipeline == "latency";
    m_max_batch = m_config.exec.batch_size > 0 ? m_config.exec.batch_size : (m_latency ? 1 : 8);
    KILN_TRY_ASSIGN(const std::vector<std::string> outputs, output_paths(m_config, inputs, m_kind));

    InferOptions options;
    options.mode = m_config.exec.mode;
    options.gpu_only = m_config.exec.gpu_only;
    options.fallback_on_error = m_config.exec.fallback_on_error;
    options.threads = m_config.exec.threads;
    options.spin_wait = false;  // decode, post-processing and encode share the cores
    options.gpu_provider = m_config.provider == "tensorrt" ? InferProvider::kTensorRt : InferProvider::kCuda;
    options.warmup_batch = m_max_batch;
    KILN_TRY_ASSIGN(m_model, SegmentModel::open(m_config.segment, options));

    VideoReaderOptions reader;
    reader.low_latency = m_latency;
    reader.hw_decode = m_config.hw_decode == "cuda"   ? VideoHwDecode::kCuda
                       : m_config.hw_decode == "none" ? VideoHwDecode::kNone
                                                      : VideoHwDecode::kAuto;
    if (m_config.exec.mode == ExecMode::kCpu && reader.hw_decode == VideoHwDecode::kAuto) {
      reader.hw_decode = VideoHwDecode::kNone;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto stream = std::make_unique<Stream>();
      stream->id = static_cast<int32_t>(i);
      KILN_TRY_ASSIGN(stream->source, FrameSource::open(inputs[i], reader, m_config.fps));
      stream->info = stream->source->info();
      if (stream->info.width <= 0 || stream->info.height <= 0) {
        return unsupported_format(inputs[i] + ": the frame size is unknown");
      }
      stream->summary.input = inputs[i];
      stream->summary.output = outputs[i];
      stream->summary.decode = stream->info.decode;
      stream->output = outputs[i];
      const double fps = stream->info.frame_rate.value() > 0 ? stream->info.frame_rate.value() : 30.0;
      stream->timeout_us = !m_latency ? 0
                           : m_config.stale_ms > 0 ? static_cast<int64_t>(m_config.stale_ms * 1000)
                                                   : static_cast<int64_t>(2e6 / fps);
      stream->in_flight_limit = m_latency ? 32 : 3 * m_max_batch + 4;
      KILN_TRY(stream_outputs_open(*stream));
      m_streams.push_back(std::move(stream));
    }
    BatcherConfig batcher;
    batcher.max_batch_size = static_cast<int32_t>(m_max_batch);
    batcher.max_queue_delay_us = m_config.max_delay_us > 0 ? m_config.max_delay_us : (m_latency ? 0 : 5000);
    batcher.priority_levels = 2;
    batcher.default_priority_level = 2;
    batcher.timeout_action = TimeoutAction::kReject;
    KILN_TRY_ASSIGN(m_batcher, DynamicBatcher<FrameTask>::create(
                                   batcher, nullptr, [this](FrameTask& task, const BatchResponse& response) {
                                     task.dropped = !response.status.is_ok();
                                     deliver(std::move(task));
                                   }));
    return Status::ok();
  }

  Result<SegmentJobSummary> run() {
    const int64_t started = now_ns();
    for (const auto& s : m_streams) m_expected += s->info.frames;
    m_decode.threads = m_post.threads = m_encode.threads = static_cast<int32_t>(m_streams.size());

    std::vector<std::thread> readers, writers;
    std::thread inferrer([this] { infer_loop(); });
    for (auto& s : m_streams) {
      readers.emplace_back([this, &s] { read_loop(*s); });
      writers.emplace_back([this, &s] { write_loop(*s); });
    }
    for (auto& t : readers) t.join();
    m_batcher->close();
    inferrer.join();
    for (auto& t : writers) t.join();
    const int64_t elapsed = now_ns() - started;

    if (Status st = first_error(); !st.is_ok()) return st;

    SegmentJobSummary summary;
    summary.seconds = static_cast<double>(elapsed) / 1e9;
    int64_t written = 0;
    std::vector<int64_t> latencies;
    for (auto& s : m_streams) {
      SegmentStreamSummary& out = s->summary;
      out.errors = s->source->errors();
      out.error_count = s->source->error_count();
      if (s->video) {
        out.encode = s->video->description();
        for (const std::string& note : s->video->notes()) out.errors.push_back(note);
      } else {
        out.encode = m_kind == SegmentOutput::kNpy ? "npy, float16" : "h5, float16";
      }
      out.foreground = out.written > 0 ? s->foreground_sum / static_cast<double>(out.written) : 0;
      written += out.written;
      latencies.insert(latencies.end(), s->latencies_ns.begin(), s->latencies_ns.end());
      summary.streams.push_back(out);
    }
    summary.fps = summary.seconds > 0 ? static_cast<double>(written) / summary.seconds : 0;
    summary.latency_p50_ms = percentile_ms(latencies, 0.50);
    summary.latency_p95_ms = percentile_ms(latencies, 0.95);
    summary.latency_p99_ms = percentile_ms(latencies, 0.99);
    const BatcherStats stats = m_batcher->stats();
    summary.batch_mean = stats.average_batch_size();
    summary.infer = m_model->session().report();
    summary.preprocess = m_preprocess_backend.empty() ? "cpu" : m_preprocess_backend;
    double busiest = -1;
    for (StageClock* c : {&m_decode, &m_infer, &m_post, &m_encode}) {
      SegmentStageSummary stage;
      stage.name = c->name;
      stage.busy_s = static_cast<double>(c->busy_ns.load()) / 1e9;
      stage.threads = c->threads;
      stage.busy_percent = summary.seconds > 0 ? 100.0 * stage.busy_s / (summary.seconds * c->threads) : 0;
      if (stage.busy_percent > busiest) {
        busiest = stage.busy_percent;
        summary.bottleneck = stage.name;
      }
      summary.stages.push_back(stage);
    }
    return summary;
  }

 private:
  Status stream_outputs_open(Stream& s) {
    const int32_t w = s.info.width, h = s.info.height;
    const int32_t mw = m_model->input_width(), mh = m_model->input_height();
    if (m_config.segment.letterbox) {
      const LetterboxPlacement p = letterbox_placement(w, h, mw, mh);
      s.region = {static_cast<float>(p.x), static_cast<float>(p.y), static_cast<float>(p.width),
                  static_cast<float>(p.height)};
    } else {
      s.region = {0, 0, static_cast<float>(mw), static_cast<float>(mh)};
    }
    KILN_TRY(matte_fit(s, mw, mh));
    if (is_array_output(m_kind)) return s.arrays.open(s.output, {h, w}, PixelType::kF16);
    VideoWriterOptions o;
    o.width = w;
    o.height = h;
    o.pixels = m_kind == SegmentOutput::kMask    ? VideoPixels::kGray
               : m_kind == SegmentOutput::kAlpha ? VideoPixels::kRgba
                                                 : VideoPixels::kRgb;
    o.time_base = s.info.time_base;
    o.frame_rate = s.info.frame_rate;
    o.codec = m_config.codec;
    o.crf = m_config.crf;
    o.low_latency = m_latency;
    if (m_config.copy_audio && s.source->is_video_file() && s.info.audio_streams > 0) o.audio_from = s.info.path;
    KILN_TRY_ASSIGN(s.video, VideoWriter::open(s.output, o));
    return Status::ok();
  }

  // The matte for probability maps of pw x ph (the model's output size, known for sure after the first batch).
  Status matte_fit(Stream& s, int32_t pw, int32_t ph) {
    const float sx = static_cast<float>(pw) / static_cast<float>(m_model->input_width());
    const float sy = static_cast<float>(ph) / static_cast<float>(m_model->input_height());
    const MatteRegion r{s.region.x * sx, s.region.y * sy, s.region.width * sx, s.region.height * sy};
    KILN_TRY_ASSIGN(s.matte, FrameMatte::make(s.info.width, s.info.height, pw, ph, r, m_kind, m_config.segment,
                                              m_config.background, m_config.blur_radius));
    s.matte_prob_width = pw;
    s.matte_prob_height = ph;
    return Status::ok();
  }

  void read_loop(Stream& s) {
    Profiler::instance().set_thread_name("read " + std::to_string(s.id));
    int64_t read = 0;
    int64_t paced_from = -1;
    double first_time = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(s.mutex);
        s.cv.wait(lock, [&] { return s.in_flight < s.in_flight_limit || m_cancelled.load(); });
        if (m_cancelled.load()) break;
        ++s.in_flight;
      }
      FrameTask task;
      task.stream = s.id;
      bool end = false;
      Status st;
      {
        StageTimer timer(m_decode);
        st = s.source->read(&task.frame, &end);
        if (st.is_ok() && !end) profile_flow_begin("frame", flow_id(s.id, task.frame.index));
      }
      if (!st.is_ok() || end) {
        std::lock_guard<std::mutex> lock(s.mutex);
        --s.in_flight;
        if (!st.is_ok()) fail(st);
        break;
      }
      if (m_latency && m_config.pace) {
        if (paced_from < 0) {
          paced_from = now_ns();
          first_time = task.frame.time_s;
        }
        const auto due = paced_from + static_cast<int64_t>((task.frame.time_s - first_time) * 1e9);
        const int64_t wait = due - now_ns();
        if (wait > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
      }
      task.arrived_ns = now_ns();
      ++read;
      if (Status e = m_batcher->enqueue(std::move(task), m_latency ? 1 : 2, s.timeout_us); !e.is_ok()) {
        if (!m_cancelled.load()) fail(e);
        break;
      }
    }
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.total = read;
    }
    s.cv.notify_all();
  }

  void infer_loop() {
    Profiler::instance().set_thread_name("infer");
    const int32_t mw = m_model->input_width(), mh = m_model->input_height();
    const int64_t item = 3LL * mw * mh;
    std::vector<float> input;
    std::vector<std::vector<float>> probs;
    for (;;) {
      auto next = m_batcher->next_batch();
      if (!next.is_ok()) break;  // closed and drained
      Batch<FrameTask>& batch = next.value();
      if (batch.empty()) continue;
      const auto n = static_cast<int64_t>(batch.size());
      const int64_t begin = now_ns();
      Status st;
      {
        StageTimer timer(m_infer);
        std::vector<ImageView> in, out;
        input.resize(static_cast<size_t>(n * item));
        for (int64_t i = 0; i < n; ++i) {
          in.push_back(batch.items[i].request.frame.rgb.view());
          out.push_back(image_view_packed(input.data() + i * item, mw, mh, 3, PixelType::kF32, m_model->input_layout()));
        }
        const VarShapeBatch in_batch = VarShapeBatch::wrap(in), out_batch = VarShapeBatch::wrap(out);
        ExecReport report;
        st = m_executor.run(OpCall{OpKind::kPreprocess, &m_model->preprocess(), in_batch.view(), out_batch.view(),
                                   nullptr},
                            &report);
        if (st.is_ok() && m_preprocess_backend.empty()) m_preprocess_backend = report.backend;
        if (st.is_ok()) st = m_model->run(input, n, &probs);
        if (st.is_ok()) {
          for (int64_t i = 0; i < n; ++i) {
            FrameTask& t = batch.items[i].request;
            t.prob = std::move(probs[static_cast<size_t>(i)]);
            t.prob_width = m_model->prob_width();
            t.prob_height = m_model->prob_height();
          }
        }
      }
      if (!st.is_ok()) {
        fail(st);
        m_batcher->complete(batch, now_ns() - begin, st);
        break;
      }
      m_batcher->complete(batch, now_ns() - begin);
    }
  }

  void deliver(FrameTask&& task) {
    Stream& s = *m_streams[static_cast<size_t>(task.stream)];
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      const int64_t index = task.frame.index;
      s.ready.emplace(index, std::move(task));
    }
    s.cv.notify_all();
  }

  void write_loop(Stream& s) {
    Profiler::instance().set_thread_name("write " + std::to_string(s.id));
    ImageBuffer out;
    std::vector<uint16_t> half;
    int64_t next = 0;
    for (;;) {
      FrameTask task;
      {
        std::unique_lock<std::mutex> lock(s.mutex);
        s.cv.wait(lock, [&] {
          return m_cancelled.load() || s.ready.count(next) != 0 || (s.total >= 0 && next >= s.total);
        });
        if (m_cancelled.load()) return;
        if (s.total >= 0 && next >= s.total) break;
        auto it = s.ready.find(next);
        task = std::move(it->second);
        s.ready.erase(it);
      }
      ++next;
      double foreground = 0;
      Status st;
      {
        StageTimer timer(m_post);
        if (task.dropped) {
          ++s.summary.dropped;
          if (s.state.empty()) {  // nothing inferred yet: no person
            s.state.assign(static_cast<size_t>(s.matte_prob_width) * s.matte_prob_height, 0.0f);
          }
        } else {
          if (task.prob_width != s.matte_prob_width || task.prob_height != s.matte_prob_height) {
            st = matte_fit(s, task.prob_width, task.prob_height);
            s.state.clear();
          }
          if (s.state.size() != task.prob.size()) s.state = task.prob;
          else mask_temporal_smooth(task.prob.data(), s.state.data(), s.state.size(), m_config.segment.temporal);
        }
        if (st.is_ok()) {
          if (is_array_output(m_kind)) {
            half.resize(static_cast<size_t>(s.info.width) * s.info.height);
            foreground = s.matte.probabilities(s.state.data(), half.data(), &m_pool);
          } else {
            foreground = s.matte.render(task.frame.rgb.view(), s.state.data(), &out, &m_pool);
          }
        }
      }
      if (st.is_ok()) {
        StageTimer timer(m_encode);
        profile_flow_end("frame", flow_id(s.id, task.frame.index));
        if (is_array_output(m_kind)) {
          st = s.arrays.append(half.data(), 1);
          s.names.push_back(s.summary.input + "@" + std::to_string(task.frame.time_s));
        } else {
          st = s.video->write(out.view(), task.frame.pts);
        }
      }
      if (!st.is_ok()) {
        fail(st);
        return;
      }
      s.foreground_sum += foreground;
      ++s.summary.written;
      if (!task.dropped) s.latencies_ns.push_back(now_ns() - task.arrived_ns);
      {
        std::lock_guard<std::mutex> lock(s.mutex);
        --s.in_flight;
      }
      s.cv.notify_all();
      progress();
    }
    s.summary.frames = s.total;
    Status st = s.video ? s.video->finish() : s.arrays.finish(s.names);
    if (!st.is_ok()) fail(st);
  }

  void progress() {
    const int64_t written = ++m_written;
    if (!m_on_progress) return;
    std::lock_guard<std::mutex> lock(m_progress_mutex);
    m_on_progress(written, m_expected);
  }

  static uint64_t flow_id(int32_t stream, int64_t index) {
    return (static_cast<uint64_t>(stream) << 40) | static_cast<uint64_t>(index);
  }

  void fail(const Status& st) {
    {
      std::lock_guard<std::mutex> lock(m_error_mutex);
      if (m_error.is_ok()) m_error = st;
    }
    m_cancelled = true;
    if (m_batcher) m_batcher->close();
    for (auto& s : m_streams) {
      { std::lock_guard<std::mutex> lock(s->mutex); }
      s->cv.notify_all();
    }
  }

  Status first_error() {
    std::lock_guard<std::mutex> lock(m_error_mutex);
    return m_error;
  }

  const SegmentJobConfig& m_config;
  SegmentProgressFn m_on_progress;
  LogFn m_log;
  ThreadPool m_pool;
  OpExecutor m_executor;
  SegmentOutput m_kind = SegmentOutput::kMask;
  bool m_latency = false;
  int64_t m_max_batch = 8;
  std::unique_ptr<SegmentModel> m_model;
  std::vector<std::unique_ptr<Stream>> m_streams;
  std::unique_ptr<DynamicBatcher<FrameTask>> m_batcher;
  std::string m_preprocess_backend;
  StageClock m_decode{"decode"}, m_infer{"infer"}, m_post{"post"}, m_encode{"encode"};
  std::atomic<bool> m_cancelled{false};
  std::mutex m_error_mutex;
  Status m_error;
  std::atomic<int64_t> m_written{0};
  int64_t m_expected = 0;
  std::mutex m_progress_mutex;
};

}  // namespace

Result<SegmentJobSummary> segment_job_run(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                          const SegmentProgressFn& on_progress, const LogFn& log) {
  SegmentRun run(config, on_progress, log);
  KILN_TRY(run.open(inputs));
  return run.run();
}

}  // namespace kiln
