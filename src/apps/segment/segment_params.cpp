// The segment settings, declared once for `kiln segment`, its config file and kiln.segment.
#include "kiln/apps/segment.h"

namespace kiln {

const ParamTable<SegmentSettings>& segment_params() {
  static const ParamTable<SegmentSettings> table = [] {
    using C = SegmentSettings;
    ParamTable<C> t;
    t.add({.name = "model", .help = "A packaged model (kiln models) or an .onnx file with an image input"},
          [](C& c) -> std::string& { return c.model; });
    t.add_string_choice({.name = "activation",
                         .help = "How the model's output becomes a probability: auto (one channel: as given when "
                                 "within [0, 1], else sigmoid; several: softmax), sigmoid, softmax, none",
                         .choices = {"auto", "sigmoid", "softmax", "none"}},
                        [](C& c) -> std::string& { return c.activation; });
    t.add({.name = "person_class", .help = "With several output channels: the person's channel", .min = 0,
           .max = 4095},
          [](C& c) -> int32_t& { return c.person_class; });
    t.add({.name = "letterbox", .help = "Fit frames into the model's input keeping their aspect (else stretch)"},
          [](C& c) -> bool& { return c.letterbox; });
    t.add({.name = "threshold", .help = "Probability at or above which a pixel is the person", .min = 0.001,
           .max = 0.999},
          [](C& c) -> float& { return c.threshold; });
    t.add({.name = "temporal",
           .help = "Temporal smoothing: the share of its previous value an uncertain pixel keeps (confident pixels "
                   "follow the new frame); 0 = off",
           .min = 0, .max = 0.99},
          [](C& c) -> float& { return c.temporal; });
    t.add({.name = "feather", .help = "Alpha, composite and blur: the probability band the alpha ramps over",
           .min = 0.001, .max = 1},
          [](C& c) -> float& { return c.feather; });
    t.add({.name = "largest_component",
           .help = "Keep only the person's largest connected region (with its soft edge): smaller regions, such as "
                   "a person in a picture behind, become background"},
          [](C& c) -> bool& { return c.largest_component; });
    return t;
  }();
  return table;
}

const ParamTable<SegmentJobConfig>& segment_job_params() {
  static const ParamTable<SegmentJobConfig> table = [] {
    using C = SegmentJobConfig;
    ParamTable<C> t;
    t.add({.name = "output_dir", .help = "A folder for one output per input, or the output file for one input"},
          [](C& c) -> std::string& { return c.output_dir; });
    t.add_choice({.name = "output",
                  .help = "mask (0/255 video), alpha (the frame with the person's alpha: .webm, .mov, .mkv), "
                          "composite (over --background), blur (background blurred), npy or h5 (the smoothed "
                          "probability per frame, float16 N x H x W)"},
                 [](C& c) -> SegmentOutput& { return c.output; }, kSegmentOutputNames, "segment output");
    t.add_string_choice({.name = "pipeline",
                         .help = "throughput: batches of 8 over every core, as fast as possible; latency: inputs "
                                 "paced at their frame rate, batches of 1, stale frames dropped",
                         .choices = {"throughput", "latency"}},
                        [](C& c) -> std::string& { return c.pipeline; });
    t.add({.name = "background", .help = "composite: a colour #rrggbb or an image file"},
          [](C& c) -> std::string& { return c.background; });
    t.add({.name = "blur_radius", .help = "blur: the background's blur radius in pixels", .min = 1, .max = 400},
          [](C& c) -> int32_t& { return c.blur_radius; });
    t.add({.name = "max_delay_us",
           .help = "Longest wait for a fuller batch (0: the mode's: throughput 5000, latency 0)", .min = 0,
           .max = 10'000'000},
          [](C& c) -> int64_t& { return c.max_delay_us; });
    t.add({.name = "stale_ms",
           .help = "latency: drop a frame that waited longer than this (0: two frame intervals)", .min = 0,
           .max = 60'000},
          [](C& c) -> double& { return c.stale_ms; });
    t.add({.name = "queue_size",
           .help = "Frames in flight at most, per input: submitted and not yet written; 0: throughput 3 x batch size "
                   "+ 4, latency 32 (kiln.SegmentPipeline in throughput: not yet taken by get_result; 0: 3 times as "
                   "many)",
           .min = 0, .max = 100'000},
          [](C& c) -> int64_t& { return c.queue_size; });
    t.add({.name = "pace", .help = "latency: deliver frames at the input's frame rate, as a live source does"},
          [](C& c) -> bool& { return c.pace; });
    t.add({.name = "preview",
           .help = "Write a PNG here: per input, frames sampled across it with the person as a coloured overlay, and "
                   "each frame's latency and person share over time"},
          [](C& c) -> std::string& { return c.preview; });
    t.add({.name = "preview_frames", .help = "Frames per input on the --preview picture", .min = 1, .max = 16},
          [](C& c) -> int32_t& { return c.preview_frames; });
    t.add({.name = "crf", .help = "Video outputs: constant quality (0 best, 51 worst)", .min = 0, .max = 63},
          [](C& c) -> int32_t& { return c.crf; });
    t.add({.name = "codec", .help = "Video outputs: an FFmpeg encoder (libx264, libx265, libvpx-vp9, ffv1 ...; "
                                    "h264_nvenc or hevc_nvenc: NVENC from device memory, an error where it cannot "
                                    "start); default by container"},
          [](C& c) -> std::string& { return c.codec; });
    t.add({.name = "fps", .help = "Image-sequence inputs: their frame rate", .min = 0.001, .max = 1000},
          [](C& c) -> double& { return c.fps; });
    t.add({.name = "copy_audio", .help = "Video outputs: copy the input's audio streams"},
          [](C& c) -> bool& { return c.copy_audio; });
    t.add_string_choice({.name = "hw_decode",
                         .help = "auto (NVDEC when a GPU and FFmpeg allow it, else software, said why), cuda, none",
                         .choices = {"auto", "cuda", "none"}},
                        [](C& c) -> std::string& { return c.hw_decode; });
    t.add_string_choice({.name = "hw_encode",
                         .help = "Video outputs without --codec: auto (H.264 on NVENC when a GPU and FFmpeg allow it, "
                                 "else the container's software encoder, said why), cuda, none",
                         .choices = {"auto", "cuda", "none"}},
                        [](C& c) -> std::string& { return c.hw_encode; });
    t.add({.name = "reference",
           .help = "A reference mask video (person > 127): the run reports the masks' mean IoU against it"},
          [](C& c) -> std::string& { return c.reference; });
    t.add_string_choice({.name = "provider", .help = "The GPU execution provider to try first",
                         .choices = {"cuda", "tensorrt"}},
                        [](C& c) -> std::string& { return c.provider; });
    t.include(segment_params(), [](C& c) -> SegmentSettings& { return c.segment; });
    t.include(exec_params(), [](C& c) -> ExecSettings& { return c.exec; });
    t.include(shard_params(), [](C& c) -> ShardSettings& { return c.shard; });
    t.add({.name = "resume",
           .help = "Continue a killed run of the same job: outputs it finished (checked against their CRC-32) are kept"},
          [](C& c) -> bool& { return c.resume; });
    t.spec_update("batch_size", [](ParamSpec& s) {
      s.help = "Frames per inference run at most";
      s.default_text = "throughput 8, latency 1";
    });
    return t;
  }();
  return table;
}

int64_t segment_queue_size(const SegmentJobConfig& config, int64_t max_batch) {
  if (config.queue_size > 0) return config.queue_size;
  return config.pipeline == "latency" ? 32 : 3 * max_batch + 4;
}

}  // namespace kiln
