// Video output through FFmpeg's libraries: u8 RGB, RGBA or gray frames with the caller's timestamps -> an encoded
// stream in the container the file name asks for, optionally with the audio streams of another file copied
// packet for packet. The file is written under a temporary name and appears at its path only when finish()
// succeeds, so a killed or failed run never leaves a half-written, unplayable video behind.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/video/video_reader.h"
#include "kiln/image.h"
#include "kiln/ops/color.h"
#include "kiln/status.h"

namespace kiln {

enum class VideoPixels : uint8_t { kRgb = 0, kRgba, kGray };

// Hardware encode, when no codec is named: auto tries NVENC (h264_nvenc, for mp4, mkv and mov without alpha) and
// falls back to the container's software encoder, saying why in description(); cuda insists (an error when NVENC
// cannot start); none is software only.
enum class VideoHwEncode : uint8_t { kAuto = 0, kCuda, kNone };

// True for the NVENC encoders a codec may name (h264_nvenc, hevc_nvenc): the writer opens them as hw_encode cuda does
// (the CUDA backend's device, device frames when asked for), and a named one that cannot start is an error.
bool video_encoder_is_nvenc(const std::string& codec);

struct VideoWriterOptions {
  int32_t width = 0;
  int32_t height = 0;
  VideoPixels pixels = VideoPixels::kRgb;
  Rational time_base{1, 30};   // of the timestamps passed to write()
  Rational frame_rate{30, 1};
  // "" = chosen by the container: mp4, mkv, mov -> libx264 (H.264); webm -> libvpx-vp9; with alpha: webm ->
  // VP9 with alpha, mov -> qtrle, mkv -> ffv1. Any FFmpeg encoder name is accepted; h264_nvenc and hevc_nvenc
  // open as NVENC does for hw_encode (video_encoder_is_nvenc).
  std::string codec;
  int32_t crf = 20;                 // x264 and VP9 constant quality (lower = better)
  std::string preset = "veryfast";  // x264 preset
  bool low_latency = false;         // x264 tune zerolatency, VP9 realtime: no frame delay in the encoder
  int32_t threads = 0;              // encoder threads; 0 = FFmpeg's choice
  std::string audio_from;           // copy the audio streams of this file (those the container can hold)
  // RGB and RGBA frames: the output is encoded with this colour space's matrix and range and tagged with all four
  // (the input's, so players show the colours the input had); unspecified: BT.601 limited range, untagged.
  VideoColour colour;
  VideoHwEncode hw_encode = VideoHwEncode::kNone;
  int32_t cuda_device = 0;  // NVENC's device: the CUDA backend's (BackendRegistry::options()), as the caller says
  // Gray and RGB frames: NVENC reads CUDA frames (NV12 in device memory), which device_frame() hands out to be
  // filled on the device; host frames given to write() go up through FFmpeg. Ignored where NVENC does not start or
  // the size is odd (device_frame() says so).
  bool device_frames = false;
};

// The encoder's next input frame in device memory: its NV12 planes as one u8 1-channel view (the luma rows, then
// from chroma_row the interleaved U, V rows, at one pitch) on the CUDA device of VideoWriterOptions::cuda_device;
// for gray frames the bytes a gray frame takes there (those write() makes of a host gray frame, so both paths give
// the same picture), for RGB frames the matrix and range to convert with (the color op's rgb_to_nv12; those the
// output is tagged with).
struct VideoDeviceFrame {
  ImageView nv12;  // device memory, (height + chroma rows) x width, valid until write_device()
  int32_t chroma_row = 0;
  uint8_t black = 16, white = 235;  // gray: the luma of gray 0 and 255
  uint8_t u = 128, v = 128;         // gray: every gray level's chroma
  YuvMatrix matrix = YuvMatrix::kBt601;  // RGB
  bool full_range = false;
};

class VideoWriter {
 public:
  // InvalidArgument for an unknown container, an odd option or alpha in a container that cannot hold it;
  // UnsupportedFormat when this FFmpeg build lacks the encoder, or NVENC cannot start for hw_encode cuda or a named
  // NVENC encoder; IoError when the file cannot be created.
  static Result<std::unique_ptr<VideoWriter>> open(const std::string& path, const VideoWriterOptions& options);
  virtual ~VideoWriter() = default;  // without finish(): the temporary file is removed, nothing appears

  // One frame (u8 HWC with the channels of options.pixels, the options' size); pts strictly increasing.
  virtual Status write(const ImageView& image, int64_t pts) = 0;
  // Device frames (VideoWriterOptions::device_frames): the frame to fill, then encode it with its pts. device_frame()
  // is NotImplemented, with the reason, where the encoder reads host frames; the frame it hands out is reused by
  // later calls until write_device() takes it.
  virtual Result<VideoDeviceFrame> device_frame() = 0;
  virtual Status write_device(int64_t pts) = 0;
  // Drains the encoder, copies the rest of the audio, writes the trailer and moves the file into place.
  virtual Status finish() = 0;
  // "h264 (libx264, yuv420p) in mp4, 1 audio stream copied"; after a fallback from NVENC, "...; software encode:
  // NVENC could not start (<FFmpeg's reason>)"; with device frames "h264 (h264_nvenc, nv12 in device memory) in
  // mp4, 170 of 180 frames from device memory"
  virtual std::string description() const = 0;
  virtual const std::vector<std::string>& notes() const = 0;  // e.g. an audio stream the container cannot hold
};

}  // namespace kiln
