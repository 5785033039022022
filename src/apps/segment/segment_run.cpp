// One run of the segment pipeline: one reader thread per input submits its frames to the segment engine
// (segment_engine.h: the shared batcher and the inference thread); one writer thread per input takes them back in
// order, smooths them in time, renders the output frame and encodes it. With the profiler on (kiln --trace), every
// frame is one flow from its read to its encode across the threads.
#include "apps/segment/segment_run.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <thread>

#include <sys/resource.h>

#include "apps/segment/device_composite.h"
#include "apps/segment/frame_matte.h"
#include "apps/segment/frame_source.h"
#include "apps/segment/nvenc_mask_frames.h"
#include "apps/segment/segment_engine.h"
#include "apps/segment/segment_smoother.h"
#include "io/tensor_writer.h"
#include "io/video/video_writer.h"

namespace kiln {

namespace {

int64_t now_ns() { return profile_now_ns(); }

double process_cpu_s() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Stream {
  int32_t id = 0;  // the engine's stream
  std::unique_ptr<FrameSource> source;
  VideoInfo info;
  SegmentStreamSummary summary;
  std::string output;
  FrameMatte matte;
  int32_t matte_prob_width = 0, matte_prob_height = 0;
  std::unique_ptr<VideoWriter> video;
  NvencMaskFrames nvenc_masks;  // mask outputs encoded from device memory
  DeviceComposite composites;   // composite outputs of frames held on the device, blended there
  TensorWriter arrays;
  std::vector<std::string> names;
  double foreground_sum = 0;
  std::vector<int64_t> latencies_ns;
  std::unique_ptr<SegmentPreviewStream> preview;  // config.preview
};

bool is_array_output(SegmentOutput kind) { return kind == SegmentOutput::kNpy || kind == SegmentOutput::kH5; }
// The frame blended over a background by the alpha (DeviceComposite's outputs).
bool blended(SegmentOutput kind) { return kind == SegmentOutput::kComposite || kind == SegmentOutput::kBlur; }

double percentile_ms(std::vector<int64_t> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t k = std::min(values.size() - 1, static_cast<size_t>(std::ceil(q * values.size())) - (q > 0 ? 1 : 0));
  return static_cast<double>(values[k]) / 1e6;
}

class SegmentRun {
 public:
  SegmentRun(const SegmentJobConfig& config, const SegmentProgressFn& on_progress, const LogFn& log,
             SegmentFinishedFn on_finished)
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
    if (const auto backend = BackendRegistry::instance().options(); backend.is_ok()) {
      reader.cuda_device = backend.value().device_id;  // the CUDA backend's, where the frames go next
    }
    if (m_config.exec.mode == ExecMode::kCpu && reader.hw_decode == VideoHwDecode::kAuto) {
      reader.hw_decode = VideoHwDecode::kNone;
    }
    // NVDEC's frames stay on the device where the model reads device memory: copied out as NV12 (mask and array
    // outputs) or converted to RGB there as they are read (their surfaces go back to the decoder at once),
    // preprocessed there, brought down only where the output shows the frame's pixels.
    reader.device_frames = reader.hw_decode != VideoHwDecode::kNone && m_engine->device_frames_wanted();
    reader.device_frames_held = 2;
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
      if (!m_config.preview.empty()) stream->preview = std::make_unique<SegmentPreviewStream>(m_config.preview_frames);
      KILN_TRY(stream_outputs_open(*stream));
      const double fps = stream->info.frame_rate.value() > 0 ? stream->info.frame_rate.value() : 30.0;
      const int64_t timeout_us = !m_latency ? 0
                                 : m_config.stale_ms > 0 ? static_cast<int64_t>(m_config.stale_ms * 1000)
                                                         : static_cast<int64_t>(2e6 / fps);
      int64_t in_flight = segment_queue_size(m_config, m_engine->max_batch());
      if (reader.device_frames) {
        // The frames in flight and the one each reader converts while it waits fit in device_frames_fit's room: RGB
        // frames, or NV12 ones (half the bytes) for outputs that never show them.
        const int64_t w = stream->info.width, h = stream->info.height;
        const bool rgb = shows_frames() || stream->preview;
        const int64_t fit = m_engine->device_frames_fit(rgb ? w * h * 3 : w * (h + (h + 1) / 2));
        if (fit >= 0) in_flight = std::clamp<int64_t>(fit / static_cast<int64_t>(inputs.size()) - 1, 2, in_flight);
      }
      stream->id = m_engine->stream_add(in_flight, timeout_us);
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

  // Each input's preview record, in input order (after run()).
  void previews_take(std::vector<std::unique_ptr<SegmentPreviewStream>>* previews) {
    for (auto& s : m_streams) previews->push_back(std::move(s->preview));
  }

  Result<SegmentJobSummary> run() {
    const int64_t started = now_ns();
    const double cpu_started = process_cpu_s();
    for (const auto& s : m_streams) {
      m_expected += s->info.frames;
      m_expected_estimated = m_expected_estimated || s->info.frames_estimated;
    }
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
    const double cpu_s = process_cpu_s() - cpu_started;
    if (Status st = m_engine->error(); !st.is_ok()) return st;

    SegmentJobSummary summary;
    summary.seconds = static_cast<double>(elapsed) / 1e9;
    summary.cpu_s = cpu_s;
    int64_t written = 0;
    std::vector<int64_t> latencies;
    for (auto& s : m_streams) {
      const SegmentStreamSummary& out = s->summary;
      written += out.written;
      latencies.insert(latencies.end(), s->latencies_ns.begin(), s->latencies_ns.end());
      summary.streams.push_back(out);
    }
    summary.fps = summary.seconds > 0 ? static_cast<double>(written) / summary.seconds : 0;
    const int64_t first = m_first_written_ns.load();
    if (first > 0) {
      summary.first_frame_s = static_cast<double>(first - started) / 1e9;
      const double after = summary.seconds - summary.first_frame_s;
      summary.steady_fps = after > 0 ? static_cast<double>(written - 1) / after : 0;
    }
    summary.latency_p50_ms = percentile_ms(latencies, 0.50);
    summary.latency_p95_ms = percentile_ms(latencies, 0.95);
    summary.latency_p99_ms = percentile_ms(latencies, 0.99);
    summary.batch_mean = m_engine->batch_mean();
    summary.batch_limit = m_engine->batch_limit();
    summary.infer = m_engine->model().session().report();
    summary.preprocess = m_engine->preprocess_backend();
    summary.model_input = m_engine->model_input();
    summary.probabilities = m_engine->probabilities_where();
    summary.matte = m_engine->matte_backend();
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
    std::vector<std::string> names;
    for (const auto& s : m_streams) names.push_back(s->summary.input);
    summary.pools = m_engine->pools(names);
    if (m_iou_frames > 0) summary.iou = m_iou_sum / static_cast<double>(m_iou_frames);
    summary.targets = segment_targets_check(m_config.targets, summary);
    return summary;
  }

 private:
  Status stream_outputs_open(Stream& s) {
    const int32_t w = s.info.width, h = s.info.height;
    const SegmentModel& model = m_engine->model();
    const int32_t mw = model.input_width(), mh = model.input_height();
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
    o.colour = s.info.colour;  // composite, blur and alpha show the input's pixels: its colours, tagged
    o.codec = m_config.codec;
    o.crf = m_config.crf;
    o.low_latency = m_latency;
    o.hw_encode = m_config.hw_encode == "cuda"                                            ? VideoHwEncode::kCuda
                  : m_config.hw_encode == "none" || m_config.exec.mode == ExecMode::kCpu ? VideoHwEncode::kNone
                                                                                         : VideoHwEncode::kAuto;
    // Device frames where the engine may hold frames there (not --mode cpu, which may still name an NVENC encoder)
    o.device_frames = (m_kind == SegmentOutput::kMask || blended(m_kind)) && m_config.exec.mode != ExecMode::kCpu &&
                      (o.hw_encode != VideoHwEncode::kNone || video_encoder_is_nvenc(o.codec));
    if (const auto backend = BackendRegistry::instance().options(); backend.is_ok()) {
      o.cuda_device = backend.value().device_id;
    }
    if (m_config.copy_audio && s.source->is_video_file() && s.info.audio_streams > 0) o.audio_from = s.info.path;
    KILN_TRY_ASSIGN(s.video, VideoWriter::open(s.output, o));
    return Status::ok();
  }

  // The matte for probability maps of pw x ph (the model's output size, known for sure after the first batch).
  Status matte_fit(Stream& s, int32_t pw, int32_t ph) {
    const SegmentModel& model = m_engine->model();
    const MatteRegion r = matte_region(s.info.width, s.info.height, model.input_width(), model.input_height(), pw, ph,
                                       m_config.segment.letterbox);
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
        if (st.is_ok() && !end && task.frame.device != nullptr) st = device_frame_take(s, &task);
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

  // An NVDEC frame converted on the model's device, or kept NV12 there where the output never shows it (mask and
  // array outputs without a preview: the preview's writer picks its samples as it goes); where it cannot be (no place
  // there, out of device memory, a failed kernel), it comes to the host as the reader converts frames, and so do the
  // stream's later frames (the reason in its decode line). A kernel or driver error stops the run instead where the
  // executor would not fall back either (mode gpu, fallback_on_error off).
  Status device_frame_take(Stream& s, SegmentFrame* task) {
    const Status on_device = m_engine->frame_to_device(task, !s.preview && !shows_frames());
    if (on_device.is_ok()) return on_device;
    const bool may_fall_back = m_config.exec.fallback_on_error && m_config.exec.mode != ExecMode::kGpu;
    if (!may_fall_back && on_device.code() == Errc::kDeviceError) return on_device;
    return s.source->device_frames_end(&task->frame, on_device.message());
  }

  // The output shows this frame's pixels (alpha, composite, blur, a preview sample): a frame held on the device
  // comes to the host (a preview's sample of one blended there: a copy); otherwise its device memory is let go now.
  Status frame_pixels_fetch(Stream& s, SegmentFrame* task) {
    if (task->rgb_device.data() == nullptr) return Status::ok();
    const bool sampled = s.preview && s.preview->wants(task->frame.index);
    const bool device_blend = blended(m_kind) && s.composites.wanted(*task);
    if (device_blend) return sampled ? m_engine->frame_to_host(task, true) : Status::ok();
    const bool shown = m_kind == SegmentOutput::kAlpha || blended(m_kind) || sampled;
    if (shown) return m_engine->frame_to_host(task);
    task->rgb_device_release();
    return Status::ok();
  }

  void write_loop(Stream& s, size_t k) {
    Profiler::instance().set_thread_name("write " + std::to_string(s.id));
    SegmentSmoother smoother(*m_engine, m_engine->model().prob_width(), m_engine->model().prob_height());
    ImageBuffer out;
    std::vector<uint16_t> half;
    SegmentFrame task;
    while (m_engine->take(s.id, &task)) {
      double foreground = 0;
      bool encoded_on_device = false;  // the frame's picture is in the encoder's device frame
      Status st;
      {
        StageTimer timer(m_post);
        if (task.dropped) ++s.summary.dropped;
        if (task.input_from_device) ++s.summary.device_frames;
        st = frame_pixels_fetch(s, &task);
        Result<ProbabilityMap> map = smoother.update(task, m_config.segment);
        if (st.is_ok()) st = map.status();
        if (st.is_ok() && (smoother.width() != s.matte_prob_width || smoother.height() != s.matte_prob_height)) {
          st = matte_fit(s, smoother.width(), smoother.height());
        }
        // Arrays, the reference's IoU and previews read the map on the host (256 x 256 or so: it comes down once).
        const bool host_map = is_array_output(m_kind) || m_reference || (s.preview && s.preview->wants(task.frame.index));
        const float* prob = nullptr;
        if (st.is_ok() && host_map) {
          Result<const float*> on_host = smoother.host();
          if (on_host.is_ok()) prob = on_host.value();
          else st = on_host.status();
        }
        if (st.is_ok() && is_array_output(m_kind)) {
          half.resize(static_cast<size_t>(s.info.width) * s.info.height);
          foreground = s.matte.probabilities(prob, half.data(), &m_engine->pool());
        } else if (st.is_ok()) {
          Result<double> share = Status(Errc::kNotImplemented, "made on the host");
          if (m_kind == SegmentOutput::kMask) share = s.nvenc_masks.fill(*m_engine, s.matte, map.value(), *s.video);
          if (blended(m_kind)) {
            share = s.composites.make(*m_engine, s.matte, task, map.value(), *s.video, &out, &encoded_on_device);
          }
          if (m_kind == SegmentOutput::kMask) encoded_on_device = share.is_ok();
          if (share.status().code() == Errc::kNotImplemented) {
            Status fetched = blended(m_kind) ? m_engine->frame_to_host(&task) : Status::ok();
            share = fetched.is_ok() ? m_engine->matte_render(s.matte, task.frame.rgb.view(), map.value(), &out)
                                    : Result<double>(fetched);
          }
          task.rgb_device_release();
          if (share.is_ok()) foreground = share.value();
          else st = share.status();
        }
        if (st.is_ok() && m_reference) reference_compare(s, prob);
        if (st.is_ok() && s.preview && s.preview->wants(task.frame.index)) {
          half.resize(static_cast<size_t>(s.info.width) * s.info.height);
          if (!is_array_output(m_kind)) s.matte.probabilities(prob, half.data(), &m_engine->pool());
          s.preview->sample(task.frame.index, task.frame.time_s, task.frame.rgb.view(), half.data(), s.info.width,
                            s.info.height);
        }
      }
      if (st.is_ok()) {
        StageTimer timer(m_encode);
        profile_flow_end("frame", flow_id(s.id, task.frame.index));
        if (is_array_output(m_kind)) {
          st = s.arrays.append(half.data(), 1);
          s.names.push_back(s.summary.input + "@" + std::to_string(task.frame.time_s));
        } else if (encoded_on_device) {
          st = s.video->write_device(task.frame.pts);
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
      const int64_t latency_ns = now_ns() - task.arrived_ns;
      if (!task.dropped) s.latencies_ns.push_back(latency_ns);
      if (s.preview) {
        s.preview->frame(task.frame.time_s, task.dropped ? NAN : static_cast<double>(latency_ns) / 1e6, foreground);
      }
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
    out.decode = s.source->info().decode;  // NVDEC's outcome is known after the first frame
    out.errors = s.source->errors();
    out.error_count = s.source->error_count();
    if (s.video) {
      out.encode = s.video->description();
      if (!s.nvenc_masks.ended_why().empty()) out.encode += "; host frames from then on: " + s.nvenc_masks.ended_why();
      out.device_composites = s.composites.made();
      if (!s.composites.ended_why().empty()) {
        out.errors.push_back("composites blended on the host from then on: " + s.composites.ended_why());
      }
      if (!s.composites.writer_why().empty()) out.encode += "; host frames from then on: " + s.composites.writer_why();
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
    int64_t none = 0;
    m_first_written_ns.compare_exchange_strong(none, now_ns());
    const int64_t written = ++m_written;
    if (!m_on_progress) return;
    std::lock_guard<std::mutex> lock(m_progress_mutex);
    m_on_progress(written, m_expected_estimated ? std::max(m_expected, written) : m_expected, m_expected_estimated);
  }

  // The output shows the frames' pixels (alpha, composite, blur); mask and array outputs only the model's maps.
  bool shows_frames() const { return m_kind != SegmentOutput::kMask && !is_array_output(m_kind); }

  static uint64_t flow_id(int32_t stream, int64_t index) {
    return (static_cast<uint64_t>(stream) << 40) | static_cast<uint64_t>(index);
  }

  const SegmentJobConfig& m_config;
  SegmentProgressFn m_on_progress;
  LogFn m_log;
  SegmentFinishedFn m_on_finished;
  SegmentOutput m_kind = SegmentOutput::kMask;
  bool m_latency = false;
  std::unique_ptr<SegmentEngine> m_engine;
  std::vector<std::unique_ptr<Stream>> m_streams;
  StageClock m_decode{"decode"}, m_post{"post"}, m_encode{"encode"};
  std::unique_ptr<VideoReader> m_reference;
  double m_iou_sum = 0;
  int64_t m_iou_frames = 0;
  std::atomic<int64_t> m_written{0};
  std::atomic<int64_t> m_first_written_ns{0};
  int64_t m_expected = 0;
  bool m_expected_estimated = false;
  std::mutex m_progress_mutex;
};

}  // namespace

Result<SegmentJobSummary> segment_streams_run(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                              const std::vector<std::string>& outputs,
                                              const SegmentProgressFn& on_progress, const LogFn& log,
                                              const SegmentFinishedFn& on_finished,
                                              std::vector<std::unique_ptr<SegmentPreviewStream>>* previews) {
  const int64_t opening = now_ns();
  SegmentRun run(config, on_progress, log, on_finished);
  KILN_TRY(run.open(inputs, outputs));
  const double open_s = static_cast<double>(now_ns() - opening) / 1e9;
  KILN_TRY_ASSIGN(SegmentJobSummary summary, run.run());
  summary.open_s = open_s;
  if (previews) run.previews_take(previews);
  return summary;
}

}  // namespace kiln
