// The segment job: one reader thread per input submits its frames to the segment engine (segment_engine.h: the
// shared batcher and the inference thread); one writer thread per input takes them back in order, smooths them in
// time, renders the output frame and encodes it. With the profiler on (kiln --trace), every frame is one flow from
// its read to its encode across the threads.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "apps/segment/frame_matte.h"
#include "apps/segment/frame_source.h"
#include "apps/segment/segment_engine.h"
#include "apps/segment/segment_parts.h"
#include "apps/segment/segment_piece.h"
#include "io/durable_file.h"
#include "io/output_lock.h"
#include "io/tensor_writer.h"
#include "io/video/video_writer.h"
#include "kiln/apps/segment.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;

int64_t now_ns() { return profile_now_ns(); }

struct Stream {
  int32_t id = 0;  // the engine's stream
  std::unique_ptr<FrameSource> source;
  VideoInfo info;
  SegmentStreamSummary summary;
  std::string output;
  MatteRegion region;  // in model-input pixels
  FrameMatte matte;
  int32_t matte_prob_width = 0, matte_prob_height = 0;
  std::unique_ptr<VideoWriter> video;
  TensorWriter arrays;
  std::vector<std::string> names;
  double foreground_sum = 0;
  std::vector<int64_t> latencies_ns;
};

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
  // Called on a writer thread when stream k (of the inputs given to open) has its output complete.
  using FinishedFn = std::function<Status(size_t k, const SegmentStreamSummary& stream)>;

  SegmentRun(const SegmentJobConfig& config, const SegmentProgressFn& on_progress, const LogFn& log,
             FinishedFn on_finished = {})
      : m_config(config), m_on_progress(on_progress), m_log(log), m_on_finished(std::move(on_finished)) {}

  // outputs: one per input (output_paths()).
  Status open(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
    if (inputs.empty()) return invalid_argument("segment: no input");
    m_kind = m_config.output;
    m_latency = m_config.pipeline == "latency";
    SegmentEngineConfig engine;
    engine.segment = m_config.segment;
    engine.exec = m_config.exec;
    engine.latency = m_latency;
    engine.max_delay_us = m_config.max_delay_us;
    engine.provider = m_config.provider;
    engine.tensorrt = m_config.tensorrt;
    engine.log = m_log;
    KILN_TRY_ASSIGN(m_engine, SegmentEngine::open(engine));

    VideoReaderOptions reader;
    reader.low_latency = m_latency;
    reader.hw_decode = m_config.hw_decode == "cuda"   ? VideoHwDecode::kCuda
                       : m_config.hw_decode == "none" ? VideoHwDecode::kNone
                                                      : VideoHwDecode::kAuto;
    if (m_config.exec.mode == ExecMode::kCpu && reader.hw_decode == VideoHwDecode::kAuto) {
      reader.hw_decode = VideoHwDecode::kNone;
    }
    // Mask and array outputs never show the frame's pixels: the decoder converts straight to the model's input size
    // (a twenty-fifth of the pixels of a 720p frame), and the fused preprocess only normalizes them.
    if (m_kind == SegmentOutput::kMask || is_array_output(m_kind)) {
      reader.scale_width = m_engine->model().input_width();
      reader.scale_height = m_engine->model().input_height();
      reader.scale_keep_aspect = m_config.segment.letterbox;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto stream = std::make_unique<Stream>();
      KILN_TRY_ASSIGN(stream->source, FrameSource::open(inputs[i], reader, m_config.fps));
      stream->info = stream->source->info();
      if (stream->info.width <= 0 || stream->info.height <= 0) {
        return unsupported_format(inputs[i] + ": the frame size is unknown");
      }
      stream->summary.input = inputs[i];
      stream->summary.output = outputs[i];
      stream->summary.decode = stream->info.decode;
      stream->output = outputs[i];
      KILN_TRY(stream_outputs_open(*stream));
      const double fps = stream->info.frame_rate.value() > 0 ? stream->info.frame_rate.value() : 30.0;
      const int64_t timeout_us = !m_latency ? 0
                                 : m_config.stale_ms > 0 ? static_cast<int64_t>(m_config.stale_ms * 1000)
                                                         : static_cast<int64_t>(2e6 / fps);
      stream->id = m_engine->stream_add(m_latency ? 32 : 3 * m_engine->max_batch() + 4, timeout_us);
      m_streams.push_back(std::move(stream));
    }
    if (!m_config.reference.empty()) {
      if (m_streams.size() != 1) return invalid_argument("segment: --reference needs exactly one input");
      KILN_TRY_ASSIGN(m_reference, VideoReader::open(m_config.reference));
      const VideoInfo& r = m_reference->info();
      if (r.width != m_streams[0]->info.width || r.height != m_streams[0]->info.height) {
        return invalid_argument(m_config.reference + ": the reference is " + std::to_string(r.width) + "x" +
                                std::to_string(r.height) + ", the input " + std::to_string(m_streams[0]->info.width) +
                                "x" + std::to_string(m_streams[0]->info.height));
      }
    }
    return Status::ok();
  }

  Result<SegmentJobSummary> run() {
    const int64_t started = now_ns();
    for (const auto& s : m_streams) m_expected += s->info.frames;
    m_decode.threads = m_post.threads = m_encode.threads = static_cast<int32_t>(m_streams.size());
    std::vector<std::thread> readers, writers;
    for (size_t k = 0; k < m_streams.size(); ++k) {
      readers.emplace_back([this, k] { read_loop(*m_streams[k]); });
      writers.emplace_back([this, k] { write_loop(*m_streams[k], k); });
    }
    for (auto& t : readers) t.join();
    m_engine->finish();
    for (auto& t : writers) t.join();
    const int64_t elapsed = now_ns() - started;
    if (Status st = m_engine->error(); !st.is_ok()) return st;

    SegmentJobSummary summary;
    summary.seconds = static_cast<double>(elapsed) / 1e9;
    int64_t written = 0;
    std::vector<int64_t> latencies;
    for (auto& s : m_streams) {
      const SegmentStreamSummary& out = s->summary;
      written += out.written;
      latencies.insert(latencies.end(), s->latencies_ns.begin(), s->latencies_ns.end());
      summary.streams.push_back(out);
    }
    summary.fps = summary.seconds > 0 ? static_cast<double>(written) / summary.seconds : 0;
    summary.latency_p50_ms = percentile_ms(latencies, 0.50);
    summary.latency_p95_ms = percentile_ms(latencies, 0.95);
    summary.latency_p99_ms = percentile_ms(latencies, 0.99);
    summary.batch_mean = m_engine->batch_mean();
    summary.infer = m_engine->model().session().report();
    summary.preprocess = m_engine->preprocess_backend();
    double busiest = -1;
    for (StageClock* c : {&m_decode, &m_engine->infer_clock(), &m_post, &m_encode}) {
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
    if (m_iou_frames > 0) summary.iou = m_iou_sum / static_cast<double>(m_iou_frames);
    summary.targets = targets_check(summary);
    return summary;
  }

 private:
  std::vector<SegmentTargetCheck> targets_check(const SegmentJobSummary& s) const {
    const SegmentTargets& t = m_config.targets;
    std::vector<SegmentTargetCheck> checks;
    char text[160];
    if (t.max_end_to_end_ms > 0) {
      std::snprintf(text, sizeof(text), "p99 %.1f ms %s %.0f ms", s.latency_p99_ms,
                    s.latency_p99_ms <= t.max_end_to_end_ms ? "<=" : ">", t.max_end_to_end_ms);
      checks.push_back({"end-to-end latency", s.latency_p99_ms <= t.max_end_to_end_ms, text});
    }
    if (t.min_fps > 0) {
      std::snprintf(text, sizeof(text), "%.1f frames/s %s %.0f", s.fps, s.fps >= t.min_fps ? ">=" : "<", t.min_fps);
      checks.push_back({"frame rate (min_fps)", s.fps >= t.min_fps, text});
    }
    if (t.target_fps > 0) {
      std::snprintf(text, sizeof(text), "%.1f frames/s %s %.0f", s.fps, s.fps >= t.target_fps ? ">=" : "<",
                    t.target_fps);
      checks.push_back({"frame rate (target_fps)", s.fps >= t.target_fps, text});
    }
    if (t.min_iou > 0) {
      if (s.iou < 0) {
        checks.push_back({"IoU", false, "not measured: give --reference MASK_VIDEO"});
      } else {
        std::snprintf(text, sizeof(text), "mean IoU %.3f %s %.2f", s.iou, s.iou >= t.min_iou ? ">=" : "<", t.min_iou);
        checks.push_back({"IoU", s.iou >= t.min_iou, text});
      }
    }
    return checks;
  }

  Status stream_outputs_open(Stream& s) {
    const int32_t w = s.info.width, h = s.info.height;
    const SegmentModel& model = m_engine->model();
    const int32_t mw = model.input_width(), mh = model.input_height();
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
    const SegmentModel& model = m_engine->model();
    const float sx = static_cast<float>(pw) / static_cast<float>(model.input_width());
    const float sy = static_cast<float>(ph) / static_cast<float>(model.input_height());
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
      SegmentFrame task;
      task.stream = s.id;
      bool end = false;
      Status st;
      {
        StageTimer timer(m_decode);
        st = s.source->read(&task.frame, &end);
        if (st.is_ok() && !end) profile_flow_begin("frame", flow_id(s.id, task.frame.index));
      }
      if (!st.is_ok()) m_engine->stop(st);
      if (!st.is_ok() || end) break;
      if (m_latency && m_config.pace) {  // a live source delivers each frame at its time
        if (paced_from < 0) {
          paced_from = now_ns();
          first_time = task.frame.time_s;
        }
        const auto due = paced_from + static_cast<int64_t>((task.frame.time_s - first_time) * 1e9);
        const int64_t wait = due - now_ns();
        if (wait > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
      }
      if (Status e = m_engine->submit(std::move(task)); !e.is_ok()) {
        if (e.code() != Errc::kCancelled) m_engine->stop(e);
        break;
      }
      ++read;
    }
    m_engine->stream_end(s.id, read);
  }

  void write_loop(Stream& s, size_t k) {
    Profiler::instance().set_thread_name("write " + std::to_string(s.id));
    SegmentSmoother smoother(m_engine->model().prob_width(), m_engine->model().prob_height());
    ImageBuffer out;
    std::vector<uint16_t> half;
    SegmentFrame task;
    while (m_engine->take(s.id, &task)) {
      double foreground = 0;
      Status st;
      {
        StageTimer timer(m_post);
        if (task.dropped) ++s.summary.dropped;
        const std::vector<float>& prob = smoother.update(task, m_config.segment);
        if (smoother.width() != s.matte_prob_width || smoother.height() != s.matte_prob_height) {
          st = matte_fit(s, smoother.width(), smoother.height());
        }
        if (st.is_ok() && is_array_output(m_kind)) {
          half.resize(static_cast<size_t>(s.info.width) * s.info.height);
          foreground = s.matte.probabilities(prob.data(), half.data(), &m_engine->pool());
        } else if (st.is_ok()) {
          foreground = s.matte.render(task.frame.rgb.view(), prob.data(), &out, &m_engine->pool());
        }
        if (st.is_ok() && m_reference) reference_compare(s, prob.data());
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
        m_engine->stop(st);
        return;
      }
      s.foreground_sum += foreground;
      ++s.summary.written;
      if (!task.dropped) s.latencies_ns.push_back(now_ns() - task.arrived_ns);
      m_engine->release(s.id);
      progress();
    }
    if (!m_engine->error().is_ok()) return;
    s.summary.frames = s.summary.written;
    Status st = s.video ? s.video->finish() : s.arrays.finish(s.names);
    if (st.is_ok()) {
      summary_complete(s);
      if (m_on_finished) st = m_on_finished(k, s.summary);
    }
    if (!st.is_ok()) m_engine->stop(st);
  }

  // What the stream's summary takes from its reader, writer and counts, once its output is complete.
  void summary_complete(Stream& s) const {
    SegmentStreamSummary& out = s.summary;
    out.errors = s.source->errors();
    out.error_count = s.source->error_count();
    if (s.video) {
      out.encode = s.video->description();
      for (const std::string& note : s.video->notes()) out.errors.push_back(note);
    } else {
      out.encode = m_kind == SegmentOutput::kNpy ? "npy, float16" : "h5, float16";
    }
    out.foreground = out.written > 0 ? s.foreground_sum / static_cast<double>(out.written) : 0;
  }

  // The next reference frame against this frame's mask; a reference shorter than the input ends the comparison.
  void reference_compare(Stream& s, const float* prob) {
    VideoFrame ref;
    bool end = false;
    if (!m_reference->read(&ref, &end).is_ok() || end) {
      m_reference.reset();
      return;
    }
    m_iou_sum += s.matte.iou(prob, ref.rgb.view());
    ++m_iou_frames;
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

  const SegmentJobConfig& m_config;
  SegmentProgressFn m_on_progress;
  LogFn m_log;
  FinishedFn m_on_finished;
  SegmentOutput m_kind = SegmentOutput::kMask;
  bool m_latency = false;
  std::unique_ptr<SegmentEngine> m_engine;
  std::vector<std::unique_ptr<Stream>> m_streams;
  StageClock m_decode{"decode"}, m_post{"post"}, m_encode{"encode"};
  std::unique_ptr<VideoReader> m_reference;
  double m_iou_sum = 0;
  int64_t m_iou_frames = 0;
  std::atomic<int64_t> m_written{0};
  int64_t m_expected = 0;
  std::mutex m_progress_mutex;
};

}  // namespace

namespace {

// What a resumed run must share with the killed one: the settings that decide the outputs, and the inputs.
std::string run_json(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs) {
  nlohmann::json run;
  run["settings"] = nlohmann::json::parse(segment_settings_json(config));
  run["inputs"] = inputs;
  run["outputs"] = outputs;
  return run.dump();
}

// Inputs [range) of `inputs` (outputs alike), but for those a killed run finished (`kept`, whose summaries go into
// the result in input order), through one SegmentRun that records each output as it completes.
Result<SegmentJobSummary> segment_range_run(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& outputs, const IndexRange& range,
                                            const std::string& base, const SegmentProgressFn& on_progress,
                                            const LogFn& log) {
  KILN_TRY_ASSIGN(OutputLock lock, OutputLock::acquire(base));
  SegmentParts parts(base);
  std::vector<std::string> notes;
  const auto slice = [&](const std::vector<std::string>& all) {
    return std::vector<std::string>(all.begin() + range.first, all.begin() + range.end());
  };
  KILN_TRY_ASSIGN(const auto kept, parts.open(run_json(config, slice(inputs), slice(outputs)), config.resume, &notes));
  for (const std::string& note : notes) {
    if (log) log("kiln: warning: " + note);
  }
  std::vector<int64_t> todo;  // indexes in the range
  for (int64_t i = 0; i < range.count; ++i) {
    if (kept.count(i) == 0) todo.push_back(i);
  }
  if (log && !kept.empty()) {
    log("Resuming: " + std::to_string(kept.size()) + " of " + std::to_string(range.count) +
        " outputs were finished by the killed run");
  }
  SegmentJobSummary summary;
  if (!todo.empty()) {
    std::vector<std::string> run_inputs, run_outputs;
    for (const int64_t i : todo) {
      run_inputs.push_back(inputs[static_cast<size_t>(range.first + i)]);
      run_outputs.push_back(outputs[static_cast<size_t>(range.first + i)]);
      // What a killed write of this output left (the lock keeps other writers of it away).
      temp_files_remove(path_parent(run_outputs.back()), fs::path(run_outputs.back()).filename().string());
    }
    std::atomic<int64_t> finished{0};
    SegmentRun run(config, on_progress, log, [&](size_t k, const SegmentStreamSummary& stream) {
      KILN_TRY(parts.output_done(todo[k], stream));
      ++finished;
      return Status::ok();
    });
    auto result = [&]() -> Result<SegmentJobSummary> {
      KILN_TRY(run.open(run_inputs, run_outputs));
      return run.run();
    }();
    if (!result.is_ok()) {
      if (kept.empty() && finished == 0) (void)parts.remove();  // nothing finished: nothing to resume
      return result.status();
    }
    summary = std::move(result).value();
  }
  // Every stream in input order, the kept ones included.
  std::vector<SegmentStreamSummary> streams;
  size_t next = 0;
  for (int64_t i = 0; i < range.count; ++i) {
    const auto found = kept.find(i);
    streams.push_back(found != kept.end() ? found->second : summary.streams[next++]);
  }
  summary.streams = std::move(streams);
  KILN_TRY(parts.remove());
  return summary;
}

}  // namespace

Result<SegmentJobSummary> segment_job_run(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                          const SegmentProgressFn& on_progress, const LogFn& log) {
  KILN_TRY_ASSIGN(const Shard shard, shard_resolve(config.shard, env_lookup_process));
  std::error_code ec;
  if (shard.is_piece() && fs::path(config.output_dir).has_extension() && !fs::is_directory(config.output_dir, ec)) {
    return invalid_argument(shard.source + ": a piece of a sharded segment job writes into a folder (-o out/)");
  }
  if (inputs.empty()) return invalid_argument("segment: no input");
  // Output names come from the whole list, so that every piece names its videos as a single run would.
  KILN_TRY_ASSIGN(const std::vector<std::string> outputs, output_paths(config, inputs, config.output));
  const int64_t total = static_cast<int64_t>(inputs.size());
  if (!shard.is_piece()) {
    // The parts and the lock sit beside the output folder (or file): "out.parts", "out.lock".
    std::string base = fs::path(config.output_dir).lexically_normal().string();
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    return segment_range_run(config, inputs, outputs, IndexRange{0, total}, base, on_progress, log);
  }
  const IndexRange range = shard_range(shard.index, shard.count, total);
  if (log) {
    log("Segmenting " + shard.label() + " (" + shard.source + "): inputs " + std::to_string(range.first) + ".." +
        std::to_string(range.end() - 1) + " of " + std::to_string(total));
  }
  // A record left by an earlier run of this piece is void until this run's outputs are complete; the piece's parts
  // and lock go beside it, apart from the other pieces writing into the same folder.
  const std::string record = segment_piece_path(config.output_dir, shard);
  fs::remove(record, ec);
  if (ec) return io_error(record + ": cannot remove the earlier record: " + ec.message());
  SegmentJobSummary summary;
  if (range.count > 0) {
    KILN_TRY_ASSIGN(summary, segment_range_run(config, inputs, outputs, range, record, on_progress, log));
  }
  KILN_TRY(segment_piece_write(record, shard, range, segment_settings_json(config), inputs, summary));
  return summary;
}

}  // namespace kiln
