// kiln.SegmentPipeline from Python: _kiln.SegmentPipeline runs the segment engine (the shared batcher and inference
// thread of `kiln segment`) on one stream of frames (numpy, or DLPack tensors: CUDA ones stay on the device).
// submit_frame hands a frame in (it blocks while the pipeline's budget of frames in flight, queue_size, is spent: up to
// its timeout, and a producer that waits long while results wait to be taken is told once); the pipeline's own thread
// takes the frames back in order, smooths them in time and makes each mask at the frame's size; get_result hands them
// out. The GIL is released while kiln works or waits.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "apps/segment/frame_matte.h"
#include "apps/segment/segment_engine.h"
#include "apps/segment/segment_smoother.h"
#include "bindings.h"
#include "dlpack_arrays.h"
#include "errors.h"
#include "params_py.h"
#include "py_jobs.h"

namespace kiln::py {

namespace pyb = pybind11;

namespace {

using Clock = std::chrono::steady_clock;

struct SegmentResult {
  int64_t frame_id = 0;
  ImageBuffer mask;      // H x W, 0 / 255
  double latency_ms = 0;  // submitted -> mask ready
  double foreground = 0;
  bool dropped = false;
  bool cancelled = false;  // stop() came before it was inferred
};

class PySegmentPipeline {
 public:
  // config: the predecessor's gpu_config.yaml, applied first (keywords > environment > file > defaults, as for
  // `kiln segment --config`); config_notes then says what of it was applied and what kiln does its own way.
  PySegmentPipeline(const std::optional<std::string>& config_path, const pyb::kwargs& kwargs) {
    if (config_path) status_check(segment_config_apply_yaml(*config_path, &m_settings.job, &m_config_notes));
    status_check(exec_settings_apply_env(&m_settings.job.exec, env_lookup_process));
    params_apply_kwargs(segment_call_params(), &m_settings, kwargs, "SegmentPipeline");
    const SegmentJobConfig& job = m_settings.job;
    SegmentEngineConfig config;
    config.segment = job.segment;
    config.exec = job.exec;
    config.latency = job.pipeline == "latency";
    config.max_delay_us = job.max_delay_us;
    config.provider = job.provider;
    config.tensorrt = job.tensorrt;
    Result<std::unique_ptr<SegmentEngine>> engine = Status(Errc::kInvalidArgument, "");
    {
      pyb::gil_scoped_release release;
      engine = SegmentEngine::open(config);
    }
    status_check(engine.status());
    m_engine = std::move(engine).value();
    const int64_t timeout_us = config.latency ? static_cast<int64_t>((job.stale_ms > 0 ? job.stale_ms : 66.7) * 1000) : 0;
    // Throughput: queue_size bounds the frames submitted and not yet taken by get_result (room_wait); at most
    // kiln segment's budget (3 x batch + 4) of them are unfinished in the engine, and by default the results waiting
    // may be twice as many (what a producer held back by untaken results could submit before queue_size existed).
    // Latency: results not taken are let go (the newest kept), and queue_size bounds the frames in the engine.
    const int64_t unfinished = 3 * m_engine->max_batch() + 4;
    m_queue_size = config.latency ? segment_queue_size(job, m_engine->max_batch())
                   : job.queue_size > 0 ? job.queue_size
                                        : 3 * unfinished;
    m_stream = m_engine->stream_add(config.latency ? m_queue_size : std::min(m_queue_size, unfinished), timeout_us);
    m_latency = config.latency;
  }

  // Nobody can take the results any more: what is not inferred yet is not.
  ~PySegmentPipeline() {
    pyb::gil_scoped_release release;
    if (m_started) m_engine->stream_cancel(m_stream);
    shutdown();
  }

  void start() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_started) return;
    m_started = true;
    m_start_ns = profile_now_ns();
    m_consumer = std::thread([this] { consume(); });
  }

  void submit_frame(const pyb::object& frame, const pyb::object& frame_id, const pyb::object& timeout) {
    if (!m_started) raise_value_error("SegmentPipeline: call start() before submit_frame()");
    double seconds = timeout.is_none() ? -1.0 : std::max(0.0, timeout.cast<double>());
    if (seconds > 1e9) seconds = -1.0;  // beyond any wait (and the clock's range): as None
    if (m_ended) raise_value_error("SegmentPipeline: stopped; start a new pipeline");
    SegmentFrame f;
    f.stream = m_stream;
    if (dlpack_offered(frame)) {
      frame_from_dlpack(frame, &f);
    } else {
      const auto array = pyb::array_t<uint8_t, pyb::array::c_style | pyb::array::forcecast>::ensure(frame);
      if (!array || array.ndim() != 3 || array.shape(2) != 3) {
        raise_value_error("submit_frame: expected a uint8 numpy array (H, W, 3) RGB, or a DLPack tensor of one");
      }
      f.frame.rgb.width = static_cast<int32_t>(array.shape(1));
      f.frame.rgb.height = static_cast<int32_t>(array.shape(0));
      f.frame.rgb.channels = 3;
      f.frame.rgb.pixels.assign(array.data(), array.data() + array.size());
    }
    // The caller's id travels with the frame; the engine numbers it when it takes its budget slot, so
    // several threads may submit at once.
    if (!frame_id.is_none()) f.caller_id = frame_id.cast<int64_t>();
    const auto begin = Clock::now();
    const std::optional<Clock::time_point> deadline =
        seconds < 0 ? std::nullopt
                    : std::optional(begin + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(seconds)));
    if (!m_latency) room_wait(begin, deadline, seconds);
    Status st;
    int64_t index = -1;
    {
      pyb::gil_scoped_release release;
      const int64_t wait_us =
          deadline ? std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(
                                              *deadline - Clock::now()).count())
                   : -1;
      st = m_engine->submit_numbered(std::move(f), &index, wait_us);
      if (index < 0 && !m_latency) {
        std::lock_guard<std::mutex> lock(m_mutex);
        --m_outstanding;  // the room taken in room_wait, not used
        m_cv.notify_all();
      }
    }
    if (index >= 0) ++m_submitted;
    if (!st.is_ok() && st.code() == Errc::kCancelled && !m_engine->stopped()) timeout_raise(st.message());
    status_check(st);
  }

  // Throughput: waits (the GIL released) until fewer than queue_size frames are submitted and not yet taken, then
  // takes a place among them; TimeoutError past the deadline. A producer still waiting after m_warn_after_s while
  // results wait to be taken is told so once per pipeline (a RuntimeWarning, with the GIL held): one thread that
  // submits every frame before it reads any would wait forever.
  void room_wait(Clock::time_point begin, const std::optional<Clock::time_point>& deadline, double seconds) {
    for (;;) {
      enum { kRoom, kStopped, kTimeout, kWarn } outcome;
      int64_t waiting = 0;
      double warn_after = 0;
      {
        pyb::gil_scoped_release release;
        std::unique_lock<std::mutex> lock(m_mutex);
        warn_after = m_warn_after_s;
        const auto warn_at =
            begin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warn_after));
        for (;;) {
          const auto now = Clock::now();
          if (m_stopping) {
            outcome = kStopped;
          } else if (m_outstanding < m_queue_size) {
            ++m_outstanding;
            outcome = kRoom;
          } else if (deadline && now >= *deadline) {
            outcome = kTimeout;
          } else if (!m_warned && now >= warn_at && !m_results.empty()) {
            m_warned = true;
            outcome = kWarn;
          } else {
            std::optional<Clock::time_point> until = deadline;
            if (!m_warned && now < warn_at && (!until || warn_at < *until)) until = warn_at;
            if (until) {
              m_cv.wait_until(lock, *until);
            } else {
              m_cv.wait(lock);
            }
            continue;
          }
          waiting = static_cast<int64_t>(m_results.size());
          break;
        }
      }
      const std::string held = std::to_string(m_queue_size) + " frames in flight (queue_size " +
                               std::to_string(m_queue_size) + ") and " + std::to_string(waiting) +
                               " results waiting to be taken";
      switch (outcome) {
        case kRoom:
          return;
        case kStopped:
          raise_value_error("SegmentPipeline: stopped; start a new pipeline");
        case kTimeout:
          timeout_raise("submit_frame: no room within " + seconds_text(seconds) + " s: " + held +
                        "; take results with get_result() to make room");
        case kWarn: {
          const std::string text = "SegmentPipeline.submit_frame has waited " + seconds_text(warn_after) +
                                   " s for room: " + held + ". Take them with get_result() (from this thread or "
                                   "another); a script that submits every frame before reading any waits forever. "
                                   "submit_frame(..., timeout=) raises TimeoutError instead.";
          if (PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), 2) < 0) throw pyb::error_already_set();
          break;
        }
      }
    }
  }

  static std::string seconds_text(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", seconds);
    return text;
  }

  [[noreturn]] static void timeout_raise(const std::string& message) {
    PyErr_SetString(PyExc_TimeoutError, message.c_str());
    throw pyb::error_already_set();
  }

  // A DLPack tensor's frame (uint8 (H, W, 3), rows at any stride): a CUDA one copied on the device into the model's
  // memory where the model reads it there (after the stream its producer ordered its writes before), else to the host;
  // a host one copied from its rows. The tensor is not read after this returns.
  void frame_from_dlpack(const pyb::object& frame, SegmentFrame* f) {
    const DlpackImages images = dlpack_images(frame);
    if (images.views.size() != 1 || images.views[0].channels != 3) {
      raise_value_error("submit_frame: expected one uint8 (H, W, 3) RGB frame");
    }
    const ImageView& v = images.views[0];
    if (v.width < 1 || v.height < 1) raise_value_error("submit_frame: an empty frame");
    Status st;
    {
      pyb::gil_scoped_release release;
      if (images.space == MemorySpace::kDevice) {
        st = images.stream->synchronize();
        if (st.is_ok()) st = m_engine->frame_from_device(f, v, *images.backend);
      } else {
        ImageBuffer& rgb = f->frame.rgb;
        rgb.width = v.width;
        rgb.height = v.height;
        rgb.channels = 3;
        rgb.pixels.resize(static_cast<size_t>(v.width) * v.height * 3);
        for (int32_t y = 0; y < v.height; ++y) {
          std::copy_n(v.row<uint8_t>(y), static_cast<size_t>(v.width) * 3, rgb.pixels.data() + y * v.width * 3);
        }
      }
    }
    status_check(st);
  }

  // (frame_id, mask, metadata) or None when nothing came within `timeout` seconds (None: wait) or after the last.
  pyb::object get_result(const pyb::object& timeout) {
    SegmentResult result;
    bool got = false;
    const double seconds = timeout.is_none() ? -1.0 : std::max(0.0, timeout.cast<double>());
    {
      pyb::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(m_mutex);
      const auto ready = [&] { return !m_results.empty() || m_consumer_done; };
      if (seconds < 0) {
        m_cv.wait(lock, ready);
      } else {
        m_cv.wait_for(lock, std::chrono::duration<double>(seconds), ready);
      }
      if (!m_results.empty()) {
        result = std::move(m_results.front());
        m_results.pop_front();
        if (!m_latency) --m_outstanding;
        got = true;
        m_cv.notify_all();  // room for the producers
      }
    }
    if (!got) {
      status_check(m_engine->error());
      return pyb::none();
    }
    pyb::array_t<uint8_t> mask({result.mask.height, result.mask.width});
    std::copy(result.mask.pixels.begin(), result.mask.pixels.end(), mask.mutable_data());
    pyb::dict metadata;
    metadata["total_latency"] = result.latency_ms;
    metadata["dropped"] = result.dropped;
    metadata["cancelled"] = result.cancelled;
    metadata["foreground"] = result.foreground;
    return pyb::make_tuple(result.frame_id, mask, metadata);
  }

  // No more frames: waits until every submitted frame has its result (they stay to be taken). cancel: the frames not
  // yet inferred are not (their results come back dropped and cancelled); otherwise every frame is inferred first.
  void stop(bool cancel) {
    pyb::gil_scoped_release release;
    if (cancel && m_started) m_engine->stream_cancel(m_stream);
    shutdown();
    status_check_released(m_engine->error());
  }

  pyb::dict get_stats() {
    pyb::dict stats;
    std::lock_guard<std::mutex> lock(m_mutex);
    const double seconds = static_cast<double>((m_stop_ns > 0 ? m_stop_ns : profile_now_ns()) - m_start_ns) / 1e9;
    stats["frames"] = m_done;
    stats["dropped"] = m_dropped;
    stats["cancelled"] = m_cancelled;
    stats["discarded"] = m_discarded;  // latency: results let go because they were not taken in time
    stats["seconds"] = seconds;
    stats["queue_size"] = m_queue_size;
    stats["fps"] = seconds > 0 ? static_cast<double>(m_done) / seconds : 0.0;
    std::vector<double> sorted = m_latencies;
    std::sort(sorted.begin(), sorted.end());
    const auto pct = [&](double q) {
      if (sorted.empty()) return 0.0;
      return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted.size())))];
    };
    stats["latency_p50_ms"] = pct(0.50);
    stats["latency_p95_ms"] = pct(0.95);
    stats["latency_p99_ms"] = pct(0.99);
    stats["batch_mean"] = m_engine->batch_mean();
    pyb::dict stages;
    std::string bottleneck;
    double busiest = -1;
    for (StageClock* c : {&m_engine->infer_clock(), &m_post}) {
      const double busy = static_cast<double>(c->busy_ns.load()) / 1e9;
      const double percent = seconds > 0 ? 100.0 * busy / seconds : 0;
      pyb::dict stage;
      stage["busy_s"] = busy;
      stage["busy_percent"] = percent;
      stages[c->name] = stage;
      if (percent > busiest) {
        busiest = percent;
        bottleneck = c->name;
      }
    }
    stats["stages"] = stages;
    stats["bottleneck_stage"] = bottleneck;
    const InferReport report = m_engine->model().session().report();
    stats["provider"] = report.provider;
    stats["preprocess"] = m_engine->preprocess_backend();
    stats["matte"] = m_engine->matte_backend();
    stats["probabilities"] = m_engine->probabilities_where();
    stats["model_input"] = m_engine->model_input();
    stats["device_frames"] = m_device_frames;  // submitted as CUDA tensors and read by the model where they were
    pyb::list pools;
    for (const SegmentPoolSummary& p : m_engine->pools({"pipeline"})) {
      pyb::dict pool;
      pool["name"] = p.name;
      pool["unit"] = p.unit;
      pool["peak"] = p.peak;
      pool["limit"] = p.limit;
      pool["allocations"] = p.allocations;
      pool["reuses"] = p.reuses;
      pools.append(pool);
    }
    stats["pools"] = pools;
    return stats;
  }

 private:
  static void status_check_released(const Status& st) {
    if (st.is_ok() || st.code() == Errc::kCancelled) return;
    pyb::gil_scoped_acquire acquire;
    status_check(st);
  }

  void shutdown() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stopping = true;  // the results left may exceed the limit now: nobody may be taking them
      m_cv.notify_all();
      if (m_ended) return;
      m_ended = true;
    }
    m_engine->stream_end(m_stream, m_submitted.load());
    if (m_consumer.joinable()) m_consumer.join();
    m_engine->finish();
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop_ns = profile_now_ns();
    m_consumer_done = true;
    m_cv.notify_all();
  }

  void consume() {
    Profiler::instance().set_thread_name("segment results");
    SegmentSmoother smoother(*m_engine, m_engine->model().prob_width(), m_engine->model().prob_height());
    std::map<std::array<int32_t, 4>, FrameMatte> mattes;  // by frame size and probability map size
    SegmentFrame f;
    while (m_engine->take(m_stream, &f)) {
      SegmentResult r;
      {
        StageTimer timer(m_post);
        Result<ProbabilityMap> map = smoother.update(f, m_settings.job.segment);
        if (!map.is_ok()) {
          m_engine->stop(map.status());
          break;
        }
        // A frame submitted as a CUDA tensor stays on the device (rgb_device) up to the model; the mask does not read
        // its pixels, so its device memory goes back now.
        const ImageView frame = f.frame.rgb.empty() ? f.rgb_device_view : f.frame.rgb.view();
        const std::array<int32_t, 4> key{frame.width, frame.height, smoother.width(), smoother.height()};
        f.rgb_device_release();
        auto it = mattes.find(key);
        if (it == mattes.end()) {
          const SegmentModel& model = m_engine->model();
          const MatteRegion region = matte_region(key[0], key[1], model.input_width(), model.input_height(), key[2],
                                                  key[3], m_settings.job.segment.letterbox);
          auto matte = FrameMatte::make(key[0], key[1], key[2], key[3], region, SegmentOutput::kMask,
                                        m_settings.job.segment, "", 1);
          if (!matte.is_ok()) {
            m_engine->stop(matte.status());
            break;
          }
          it = mattes.insert_or_assign(key, std::move(matte).value()).first;
        }
        Result<double> share = m_engine->matte_render(it->second, f.frame.rgb.view(), map.value(), &r.mask);
        if (!share.is_ok()) {
          m_engine->stop(share.status());
          break;
        }
        r.foreground = share.value();
      }
      r.dropped = f.dropped;
      r.cancelled = f.cancelled;
      r.latency_ms = static_cast<double>(profile_now_ns() - f.arrived_ns) / 1e6;
      m_engine->release(m_stream);
      std::unique_lock<std::mutex> lock(m_mutex);
      r.frame_id = f.caller_id.value_or(f.frame.index);
      ++m_done;
      if (f.input_from_device) ++m_device_frames;
      if (r.cancelled) ++m_cancelled;
      else if (r.dropped) ++m_dropped;
      else m_latencies.push_back(r.latency_ms);
      // Results not taken hold the producer back in throughput (they count against queue_size in submit_frame);
      // latency keeps the newest and lets the oldest go, as a live display would.
      if (m_latency) {
        for (; m_results.size() >= kLatencyResultsKept; ++m_discarded) m_results.pop_front();
      }
      m_results.push_back(std::move(r));
      m_cv.notify_all();
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    m_consumer_done = m_consumer_done || !m_engine->error().is_ok();
    m_cv.notify_all();
  }

  SegmentCallSettings m_settings;
  std::unique_ptr<SegmentEngine> m_engine;
  int32_t m_stream = 0;
  std::thread m_consumer;
  StageClock m_post{"post"};
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<SegmentResult> m_results;
  std::vector<double> m_latencies;
  std::atomic<int64_t> m_submitted{0};
  int64_t m_done = 0, m_dropped = 0, m_cancelled = 0, m_discarded = 0, m_device_frames = 0;
  static constexpr size_t kLatencyResultsKept = 16;
  int64_t m_queue_size = 0;
  int64_t m_outstanding = 0;   // throughput: frames submitted (or being submitted) and not yet taken by get_result
  double m_warn_after_s = 5;   // a producer waiting longer while results wait is told so (once: m_warned)
  bool m_warned = false;
  bool m_latency = false, m_stopping = false;
  int64_t m_start_ns = 0, m_stop_ns = 0;
  bool m_started = false, m_ended = false, m_consumer_done = false;
  std::vector<std::string> m_config_notes;

 public:
  const std::vector<std::string>& config_notes() const { return m_config_notes; }
  double warn_after() {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_warn_after_s;
  }
  void warn_after_set(double seconds) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_warn_after_s = seconds;
  }
};

}  // namespace

void segment_bindings_add(pyb::module_& m) {
  pyb::class_<PySegmentPipeline>(m, "SegmentPipeline")
      .def(pyb::init<const std::optional<std::string>&, const pyb::kwargs&>(), pyb::arg("config") = pyb::none())
      .def_property_readonly("config_notes", &PySegmentPipeline::config_notes)
      .def("start", &PySegmentPipeline::start)
      .def("submit_frame", &PySegmentPipeline::submit_frame, pyb::arg("frame"), pyb::arg("frame_id") = pyb::none(),
           pyb::arg("timeout") = pyb::none())
      // Seconds a producer waits for room before the RuntimeWarning (5); tests shorten it.
      .def_property("_warn_after", &PySegmentPipeline::warn_after, &PySegmentPipeline::warn_after_set)
      .def("get_result", &PySegmentPipeline::get_result, pyb::arg("timeout") = pyb::none())
      .def("get_stats", &PySegmentPipeline::get_stats)
      .def("stop", &PySegmentPipeline::stop, pyb::arg("cancel") = true);
}

}  // namespace kiln::py
