// The engine of the segment application, shared by the file job (kiln segment) and the Python pipeline
// (kiln.SegmentPipeline): frames submitted to streams -> kiln's dynamic batcher (every stream shares it; latency
// streams come first and their frames carry a deadline: a stale frame is dropped, not inferred) -> one inference
// thread (the batch's fused preprocess, then the model) -> each stream's frames back in their order, where the
// stream's consumer takes them (and smooths them in time: SegmentSmoother). Each stream has a budget of frames in
// flight (submitted and not yet released), so memory stays flat and a slow consumer holds its producer back.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/segment/frame_matte.h"
#include "apps/segment/segment_model.h"
#include "core/backend_block.h"
#include "core/thread_pool.h"
#include "io/video/video_reader.h"
#include "io/video/video_writer.h"
#include "kiln/apps/segment.h"
#include "pipeline/adaptive_batch_sizer.h"
#include "pipeline/batcher.h"
#include "profiler/profiler.h"

namespace kiln {

// One frame on its way through the engine.
struct SegmentFrame {
  int32_t stream = 0;
  VideoFrame frame;        // frame.index: 0, 1, 2 ... within its stream
  // NVDEC's picture converted to RGB in the model's device memory (SegmentEngine::frame_to_device; frame.rgb is
  // empty meanwhile): rgb_device_view (width x height x 3, u8, packed) over rgb_device. For an output that never
  // shows the frame, the picture stays NV12 instead: rgb_device_view is then its packed planes (PreprocessParams::nv12)
  // and device_nv12 their conversion to RGB, which the batch's preprocess does as it samples them.
  DeviceBlock rgb_device;
  ImageView rgb_device_view;
  std::optional<ColorParams> device_nv12;
  void rgb_device_release() {
    rgb_device.reset();
    rgb_device_view = ImageView();
    device_nv12.reset();
  }
  bool input_from_device = false;  // the model read it from rgb_device: it never was on the host before the model
  // The model's output for this frame left in its device memory (SegmentModel::run_to_device; prob is empty then):
  // output_device_view inside output_device, which the batch's frames share; output_params make it the person's
  // probability (SegmentSmoother, through the probability op).
  std::shared_ptr<DeviceBlock> output_device;
  ImageView output_device_view;
  ProbabilityParams output_params;
  int64_t arrived_ns = 0;  // when it was submitted (latency counts from here)
  std::vector<float> prob;  // the model's person probability, prob_width x prob_height (not yet smoothed)
  int32_t prob_width = 0, prob_height = 0;
  bool dropped = false;     // waited past its stream's deadline, or cancelled: not inferred
  bool cancelled = false;   // its stream was cancelled before it was inferred
  std::optional<int64_t> caller_id;  // the producer's own id for the frame (kiln.SegmentPipeline's frame_id)
};

struct SegmentEngineConfig {
  SegmentSettings segment;
  ExecSettings exec;          // mode, threads, batch_size (0 = the pipeline's: throughput 8, latency 1)
  bool latency = false;
  int64_t max_delay_us = 0;   // 0 = the pipeline's (throughput 5000, latency 0)
  std::string provider = "cuda";
  TensorRtOptions tensorrt;
  LogFn log;
};

// A stage's busy time, summed over its threads.
struct StageClock {
  const char* name;
  std::atomic<int64_t> busy_ns{0};
  int32_t threads = 1;
};

// Adds the time from construction to destruction to a StageClock, and records it as a profiler range.
class StageTimer {
 public:
  explicit StageTimer(StageClock& clock) : m_clock(clock), m_begin(profile_now_ns()), m_scope(clock.name) {}
  ~StageTimer() { m_clock.busy_ns += profile_now_ns() - m_begin; }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  StageClock& m_clock;
  int64_t m_begin;
  ProfileScope m_scope;
};

class SegmentEngine {
 public:
  static Result<std::unique_ptr<SegmentEngine>> open(const SegmentEngineConfig& config);
  ~SegmentEngine();
  SegmentEngine(const SegmentEngine&) = delete;
  SegmentEngine& operator=(const SegmentEngine&) = delete;

  // A new stream: at most `in_flight_limit` of its frames submitted and not yet released; timeout_us > 0 drops a
  // frame that waited longer (latency streams).
  int32_t stream_add(int64_t in_flight_limit, int64_t timeout_us);
  // Blocks while the stream's budget is spent: at most `wait_us` microseconds when it is >= 0, then Cancelled with
  // the reason (frames are not taken and released: a consumer that submits everything before it takes anything waits
  // forever otherwise). Cancelled once the engine stopped (stopped() tells the two apart). frame.frame.index: 0, 1, 2
  Status submit(SegmentFrame frame, int64_t wait_us = -1);
  // The same for producers on several threads (kiln.SegmentPipeline): the engine numbers the frame with the stream's
  // next index when it takes the frame's budget slot, so the frames in flight are always the lowest indexes (an index
  // read before a wait could be taken twice, or a later one fill the budget while an earlier one waits: the stream
  // would stall). *index: the number given, or -1 when the frame was not taken (stopped first). A numbered frame the
  // batcher refuses (it closes only when the engine stops) stops the engine: its stream could not go on.
  Status submit_numbered(SegmentFrame frame, int64_t* index, int64_t wait_us = -1);
  // No more frames for the stream: `total` were submitted.
  void stream_end(int32_t stream, int64_t total);
  // The stream's frames not yet inferred are not inferred: they come out dropped and cancelled (a batch whose
  // frames all belong to cancelled streams is not run).
  void stream_cancel(int32_t stream);
  // The stream's next frame in order (waits for it); false after its last frame or once stopped.
  bool take(int32_t stream, SegmentFrame* out);
  // A taken frame is finished: its budget slot is free again.
  void release(int32_t stream);
  // Every stream has ended: the batcher drains and the inference thread exits; waits for it.
  void finish();
  // Stops everything at once (a failure): waiting calls return, the first error is kept.
  void stop(const Status& why);
  Status error() const;
  bool stopped() const { return m_stopped.load(); }

  // NVDEC's frames (VideoFrame::device) are worth keeping on the device: the model reads the device's memory in
  // place (the input stager's device path is open).
  bool device_frames_wanted() const { return m_stager->device_path() != nullptr; }
  // The frame's NV12 picture converted to RGB in the model's device memory by the executor's color op (rgb_device),
  // or with `as_nv12` its planes copied there as they are (device_nv12), its decoder surface let go; the reason it
  // cannot be as the error (the caller brings the frame to the host).
  Status frame_to_device(SegmentFrame* frame, bool as_nv12);
  // A frame given in device memory (kiln.SegmentPipeline's CUDA tensors; `image`: u8 RGB HWC, any row stride, in
  // `producer`'s memory): copied into the model's device memory (rgb_device) where the model reads it there, else
  // brought to the host (frame.rgb).
  Status frame_from_device(SegmentFrame* frame, const ImageView& image, Backend& producer);
  // A frame held on the device brought to the host (frame.rgb; a frame uploaded from there keeps its pixels), its
  // device memory let go unless `keep_on_device` (a composite blended there whose frame a preview samples too);
  // nothing for others.
  Status frame_to_host(SegmentFrame* frame, bool keep_on_device = false);
  // How many frames of `frame_bytes` fit in half the model's device pool budget, or without one in a quarter of the
  // device's free memory (-1: no device path, or its free memory is unknown).
  int64_t device_frames_fit(int64_t frame_bytes) const;

  SegmentModel& model() { return *m_model; }
  ThreadPool& pool() { return m_pool; }
  StageClock& infer_clock() { return m_infer; }
  int64_t max_batch() const { return m_max_batch; }
  // Frames per inference run the batcher forms now: the adaptive sizer's choice (throughput), within the largest
  // batch that fitted after the model ran out of memory.
  int32_t batch_limit() const { return m_batcher ? m_batcher->batch_limit() : 0; }
  double batch_mean() const;
  std::string preprocess_backend() const;
  // Where the model read its input (InputStager::where).
  std::string model_input() const;
  // One frame's matte through the engine's executor (the CPU, or the GPU where the job's image ops run); returns its
  // person share (FrameMatte::render). matte_backend() names where the first one ran. A map
  // on the device whose matte cannot be made there (not placed there; a failure where fallback is allowed) comes to
  // the host for it, and the rest of the job's probabilities stay on the host (device_probabilities_end).
  Result<double> matte_render(const FrameMatte& matte, const ImageView& frame, const ProbabilityMap& map,
                              ImageBuffer* out);
  // Mask outputs into NVENC's device frames: a device map's mask written into `device_out` (device memory of the
  // map's device: the encoder frame's luma rows) with `white` / `black`, its person share counted there; nothing
  // comes to the host (FrameMatte::mask_on_device). On an error the caller makes the frame with matte_render.
  Result<double> mask_on_device(const FrameMatte& matte, const ProbabilityMap& map, const ImageView& device_out,
                                uint8_t white, uint8_t black);
  // Composite outputs of frames held on the device (NVDEC's, CUDA tensors): blended there over `background` into
  // `device_out` (device memory, frame size; FrameMatte::composite_on_device); on an error the caller brings the
  // frame to the host and makes it with matte_render.
  Result<double> composite_on_device(const FrameMatte& matte, const ImageView& frame, const ImageView& background,
                                     const ProbabilityMap& map, const ImageView& device_out);
  // Blur outputs of frames held on `device`: the frame's blurred background into `device_out` (device memory, frame
  // size) for composite_on_device (FrameMatte::blur_on_device).
  Status blur_on_device(const FrameMatte& matte, Backend& device, const ImageView& frame, const ImageView& device_out);
  // `rgb` (u8 RGB in `device`'s memory) converted into NVENC's device frame (the color op's rgb_to_nv12 with the
  // frame's matrix and range); NotImplemented where the executor does not place it on `device`.
  Status encoder_frame_fill(Backend& device, const ImageView& rgb, const VideoDeviceFrame& frame);
  // The probability op on a frame's model output left on `device` (SegmentFrame::output_device_view) into a map
  // in the same device's memory (its previous smoothed map on entry when params.temporal > 0). NotImplemented where
  // the executor does not place the op on that device; KILN_FAULT=device_map:N fails the N-th call.
  Status probability_on_device(Backend& device, const ImageView& output, const ProbabilityParams& params,
                               const ImageView& map);
  // Probabilities are no longer kept on the device, for the rest of the job (`why`, for the summary): later batches'
  // outputs come to the host. Safe from any thread.
  void device_probabilities_end(const std::string& why);
  bool device_probabilities_on() const { return !m_device_probabilities_off.load(); }
  // A device step that failed with `st` may be redone on the host (mode auto with fallback_on_error), else it
  // stops the job.
  bool device_fallback_allowed(const Status& st) const;
  // Where the frames' probabilities were made and smoothed: "device (N frames)", "host", or with "then host (why)".
  std::string probabilities_where() const;
  std::string matte_backend() const;
  // The memory pools that served anything (every backend's host and device pools), then each stream's frames in
  // flight, named by `stream_names` (index = stream).
  std::vector<SegmentPoolSummary> pools(const std::vector<std::string>& stream_names);

 private:
  void matte_backend_record(const ExecReport& report);  // the first matte's backend, for matte_backend()
  struct Link {  // one stream's side of the engine
    std::mutex mutex;
    std::condition_variable cv;
    std::map<int64_t, SegmentFrame> ready;  // by frame index
    int64_t next = 0;      // the index take() gives next
    int64_t total = -1;    // frames submitted, once ended
    int64_t in_flight = 0;
    int64_t in_flight_peak = 0;
    int64_t in_flight_limit = 8;
    int64_t numbered = 0;  // submit_numbered: the next index
    int64_t timeout_us = 0;
    std::atomic<bool> cancelled{false};
  };

  explicit SegmentEngine(const SegmentEngineConfig& config);
  Status open();
  void infer_loop();
  // The batch's frames preprocessed into `input`: from device memory when every frame is there, else each brought
  // to the host first (also when the device path refuses them).
  Status batch_stage(Batch<SegmentFrame>& batch, StagedInput* input);
  // The model on a staged batch: its outputs left on the device for the frames where the session and the job allow
  // it (SegmentModel::run_to_device), else each frame's probability on the host.
  Status batch_infer(const StagedInput& input, Batch<SegmentFrame>& batch);
  // A frame on the host copied into the model's device memory (rgb_device), for a batch staged there.
  Status frame_upload(SegmentFrame* frame);
  // The conversion every frame of the batch shares when all are NV12 on the device (device_nv12), else none.
  static std::optional<ColorParams> batch_nv12(const Batch<SegmentFrame>& batch);
  // A device NV12 frame converted to RGB there, for a batch it cannot be preprocessed with as NV12.
  Status frame_nv12_to_rgb(SegmentFrame* frame);
  // frame_to_host for a device NV12 frame: converted to RGB there and brought down, or where the device fails and the
  // job may fall back, its planes brought down and converted on the CPU.
  Status frame_nv12_to_host(SegmentFrame* frame, bool keep_on_device);
  // The executor's colour conversion of `in` into `out`, both in `device`'s memory; NotImplemented where the
  // executor would place it elsewhere.
  Status color_on_device(Backend& device, const ImageView& in, const ImageView& out, const ColorParams& params);
  void batch_size_adapt(int64_t batch, int64_t compute_ns);
  void deliver(SegmentFrame&& frame);
  Status submit_to(Link& l, SegmentFrame frame, bool number, int64_t* index, int64_t wait_us);
  Link& link(int32_t stream);

  SegmentEngineConfig m_config;
  ThreadPool m_pool;
  OpExecutor m_executor;
  int64_t m_max_batch = 8;
  std::unique_ptr<SegmentModel> m_model;
  std::unique_ptr<InputStager> m_stager;  // the model's input, preprocessed where the model reads it
  std::unique_ptr<DynamicBatcher<SegmentFrame>> m_batcher;
  bool m_adaptive = false;  // throughput with batches of more than one: the sizer moves the batch size
  AdaptiveBatchSizer m_sizer;
  int64_t m_halvings_seen = 0;
  // device_frames_fit's bytes, measured once; it is called while the run opens its inputs, on one thread.
  mutable uint64_t m_device_frames_room = 0;
  std::mutex m_links_mutex;
  std::vector<std::unique_ptr<Link>> m_links;
  std::thread m_infer_thread;
  StageClock m_infer{"infer"};
  std::atomic<bool> m_stopped{false};
  mutable std::mutex m_state_mutex;
  Status m_error;
  std::string m_preprocess_backend;
  std::string m_preprocess_nv12;  // the backend of the first batch preprocessed from NV12 frames
  std::string m_matte_backend;
  std::atomic<bool> m_device_probabilities_off{false};
  std::atomic<int64_t> m_device_probability_frames{0};  // made and smoothed on the device
  bool m_device_outputs_seen = false;  // a batch left its outputs there (the inference thread's)
  int64_t m_device_batch_limit = INT64_MAX;  // batches above it ran out of memory there (the inference thread's)
  std::string m_device_probabilities_note;  // why they stopped (m_state_mutex)
};

}  // namespace kiln
