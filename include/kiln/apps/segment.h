// The segmentation application: video (files, capture devices, image sequences) -> decode -> fused preprocess ->
// batched person segmentation (the converted MediaPipe selfie model, or any ONNX model) -> the person probability
// per frame, smoothed across frames -> a mask, alpha, composite or background-blurred video, or arrays.
// `kiln segment` runs the job; several inputs share one batcher.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/exec.h"
#include "kiln/infer.h"
#include "kiln/params.h"
#include "kiln/scale.h"

namespace kiln {

// What the model gives and how it becomes a person probability, and how that becomes the output's mask.
struct SegmentSettings {
  std::string model = "selfie";     // a packaged model's name, or an .onnx file
  // auto: one channel: used as it is when every value is within [0, 1], else sigmoid; several channels: softmax.
  std::string activation = "auto";  // auto | sigmoid | softmax | none
  int32_t person_class = 1;         // with several channels: the person's channel
  bool letterbox = false;           // fit the frame into the model's input keeping its aspect (else stretch)
  float threshold = 0.5f;           // probability at or above which a pixel is the person
  // Temporal smoothing (MediaPipe's): each pixel keeps this share of its previous value, weighted by how uncertain
  // the new value is (confident pixels follow the new frame at once, so motion does not lag). 0 = off.
  float temporal = 0.7f;
  float feather = 0.2f;  // alpha, composite, blur: alpha ramps over this probability band around the threshold
  // Keep only the largest connected region at or above the threshold, with its soft edge (after temporal smoothing,
  // which itself sees every region).
  bool largest_component = false;
};

// model, activation, person_class, letterbox, threshold, temporal, feather, largest_component.
const ParamTable<SegmentSettings>& segment_params();

// mask: 0/255 gray video; alpha: the frame with the person's alpha (.webm, .mov, .mkv); composite: the person over
// `background`; blur: the background blurred; npy / h5: the smoothed probability per frame, float16 N x H x W.
enum class SegmentOutput : uint8_t { kMask = 0, kAlpha, kComposite, kBlur, kNpy, kH5 };
inline constexpr EnumName<SegmentOutput> kSegmentOutputNames[] = {
    {SegmentOutput::kMask, "mask"}, {SegmentOutput::kAlpha, "alpha"}, {SegmentOutput::kComposite, "composite"},
    {SegmentOutput::kBlur, "blur"}, {SegmentOutput::kNpy, "npy"},     {SegmentOutput::kH5, "h5"}};

// The performance targets of a config file (the predecessor's `targets` section); 0 = none. Checked at the end.
struct SegmentTargets {
  double max_end_to_end_ms = 0;  // p99 latency, arrival -> encoded
  double min_fps = 0;
  double target_fps = 0;
  double min_iou = 0;            // mean mask IoU against --reference
};

struct SegmentJobConfig {
  SegmentSettings segment;
  std::string output_dir;      // -o: a folder (one output per input), or a file name for one input
  SegmentOutput output = SegmentOutput::kMask;
  // throughput: batches, every core | latency: paced at the source's rate (exec.mode says where things run)
  std::string pipeline = "throughput";
  std::string background = "#00b140";  // composite: a colour (#rrggbb) or an image file
  int32_t blur_radius = 25;            // blur: the background's blur radius in pixels
  int64_t max_delay_us = 0;       // longest wait for a fuller batch; 0 = the mode's (throughput 5 ms, latency 0)
  double stale_ms = 0;            // latency: a frame waiting longer is dropped; 0 = two frame intervals
  bool pace = true;               // latency: read inputs at their frame rate, as a live source delivers them
  // Frames in flight at most: per input of kiln segment, submitted and not yet written; in kiln.SegmentPipeline's
  // throughput mode, submitted and not yet taken by get_result. 0 = the mode's (segment_queue_size; the Python
  // pipeline's throughput: 3 times that).
  int64_t queue_size = 0;
  int32_t crf = 20;               // video outputs: constant quality (lower = better)
  std::string codec;              // video outputs: an FFmpeg encoder name; "" = by container
  double fps = 30;                // image-sequence inputs: their frame rate
  bool copy_audio = true;         // video outputs: copy the input's audio streams
  std::string hw_decode = "auto";  // auto (NVDEC when possible, said when not) | cuda | none
  std::string hw_encode = "auto";  // video outputs: auto (NVENC when possible, said when not) | cuda | none
  std::string provider = "cuda";  // the GPU execution provider to try first: cuda | tensorrt
  TensorRtOptions tensorrt;       // with provider tensorrt (from a config file)
  std::string reference;          // a reference mask video (person > 127): the mean IoU of the masks against it
  std::string preview;            // a PNG: per input, preview_frames frames with the person overlaid, and plots of
  int32_t preview_frames = 4;     // each frame's latency and person share over time
  SegmentTargets targets;         // from a config file
  ShardSettings shard;            // a piece of the job: inputs [I*n/N, (I+1)*n/N) and a record for kiln merge
  // Continue a killed run: each output, once finished, is recorded (with its CRC-32) in "<output>.parts/"; a resumed
  // run keeps the outputs that are still as recorded and makes the others.
  bool resume = false;
  // mode (where inference and preprocessing run), threads, batch_size (0 = the mode's: throughput 8 on a GPU
  // provider and 1 on the CPU one, latency 1)
  ExecSettings exec = [] {
    ExecSettings e;
    e.batch_size = 0;
    return e;
  }();
};
const ParamTable<SegmentJobConfig>& segment_job_params();
// SegmentJobConfig::queue_size, or when 0 the mode's: throughput 3 x the batch size + 4 (`max_batch`: the engine's),
// latency 32.
int64_t segment_queue_size(const SegmentJobConfig& config, int64_t max_batch);

struct SegmentStreamSummary {
  std::string input;
  std::string output;
  std::string decode;         // software/NVDEC, threads
  std::string encode;         // the encoder and container
  int64_t frames = 0;         // read from the input
  int64_t written = 0;        // frames in the output (dropped ones are written with the last mask)
  int64_t dropped = 0;        // latency mode: frames not inferred because they waited too long
  int64_t device_frames = 0;  // NVDEC's frames the model read from device memory: never on the host before it
  int64_t device_composites = 0;  // composite and blur outputs: frames blended on the device (RGB never came down)
  double foreground = 0;      // mean share of person pixels over the frames
  std::vector<std::string> errors;  // damaged input, audio not copied ...
  int64_t error_count = 0;
  bool resumed = false;       // finished by the killed run this one resumed (--resume), kept as it was
};

struct SegmentStageSummary {
  std::string name;     // decode, infer, post, encode
  double busy_s = 0;    // summed over the stage's threads
  int32_t threads = 1;
  double busy_percent = 0;  // busy_s / (wall time x threads)
};

struct SegmentTargetCheck {
  std::string name;    // "end-to-end latency", "frame rate", "IoU"
  bool met = false;
  std::string detail;  // "p99 38.2 ms <= 50 ms"
};

// A high-water mark of the run: a backend's memory pool (bytes held at most since the process started, against its
// budget) or an input's frames in flight (at most, against its budget).
struct SegmentPoolSummary {
  std::string name;         // "cpu host memory", "cuda device memory", "frames in flight: talk.mp4"
  std::string unit;         // "bytes" | "frames"
  int64_t peak = 0;
  int64_t limit = 0;        // 0: no budget
  int64_t allocations = 0;  // memory pools: blocks taken from the system or the driver
  int64_t reuses = 0;       // memory pools: requests served from blocks given back
};

struct SegmentJobSummary {
  std::vector<SegmentStreamSummary> streams;
  std::vector<SegmentStageSummary> stages;
  std::string bottleneck;  // the busiest stage
  double seconds = 0;
  double fps = 0;          // frames written per second, all streams
  double open_s = 0;       // opening the model (and its warm-up runs) and the inputs, before `seconds` starts
  double first_frame_s = 0;  // from the start to the first frame written: the first batch, cuDNN's searches
  double steady_fps = 0;   // frames written after the first one, per second after it
  // CPU time (user + system) of the whole process during `seconds`: every thread's (the stages', the decoder's,
  // the encoder's, ONNX Runtime's) and whatever else the process runs meanwhile; cpu_s / seconds: the cores it kept
  // busy.
  double cpu_s = 0;
  double latency_p50_ms = 0, latency_p95_ms = 0, latency_p99_ms = 0;  // decoded (arrived) -> encoded
  double batch_mean = 0;   // frames per inference run
  int64_t batch_limit = 0;  // frames per run the batcher forms at most at the end (adaptive; out of memory)
  InferReport infer;       // provider, placement, fallbacks
  std::string preprocess;  // where the fused preprocess ran
  std::string model_input;  // where the model read its input: "host", or "device (N runs)" (InferJobSummary's)
  std::string matte;       // where the frames' mattes (mask or alpha) were made
  // where the model's outputs became smoothed probabilities: "device (N frames)" (left in device memory by the
  // model, smoothed there), "host", or "..., then host (why)"
  std::string probabilities;
  double iou = -1;         // mean mask IoU against the reference (-1: none given)
  std::vector<SegmentTargetCheck> targets;
  std::vector<SegmentPoolSummary> pools;  // memory pools used, then each input's frames in flight
};

// The predecessor's configs/gpu_config.yaml, accepted unchanged: what has an equivalent is applied to `config`
// (batching, tensorrt, strategies.priority, targets, debug.fallback_to_cpu); `notes` says what was applied and what
// kiln does its own way. InvalidArgument naming the key for a value of the wrong type; IoError for an unreadable file.
Status segment_config_apply_yaml(const std::string& path, SegmentJobConfig* config, std::vector<std::string>* notes);

// Progress: frames written so far, and the frames expected (0 when unknown); `estimated` when an input declares no
// frame count and its duration x rate stands for it (then never below `written`: joined or damaged files run longer).
using SegmentProgressFn = std::function<void(int64_t written, int64_t expected, bool estimated)>;

// InvalidArgument/UnsupportedFormat for unusable settings or inputs before anything is written. A damaged input is
// processed as far as it decodes; its errors are in the summary and its output is complete and playable.
Result<SegmentJobSummary> segment_job_run(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                          const SegmentProgressFn& on_progress = {}, const LogFn& log = {});

}  // namespace kiln
