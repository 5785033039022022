// Video input through FFmpeg's libraries: files of any container and codec the FFmpeg build decodes, and capture
// devices (/dev/video*, through libavdevice). Frames come out as u8 RGB in presentation order with their
// timestamps. Damaged data does not end a read: a packet the decoder rejects is counted and reading goes on, so
// a corrupt or truncated file yields every frame that can be decoded, and errors() says what was lost. Timestamps
// always increase: where the input's go back or stand still (transport streams joined end to end, a camera that
// restarted), the rest of the stream is shifted to follow on one frame later, and errors() says where. A stream whose
// display matrix turns it by quarter turns (phones record sideways) comes out turned, upright as it is meant to be
// seen; width and height are the picture's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/codec.h"
#include "kiln/ops/color.h"
#include "kiln/status.h"

namespace kiln {

struct Rational {
  int64_t num = 0;
  int64_t den = 1;
  double value() const { return den == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(den); }
};

// Hardware decode: auto tries NVDEC (FFmpeg's CUDA hwaccel) and falls back to software decode, saying why;
// cuda insists (an error when it cannot); none is software only.
enum class VideoHwDecode : uint8_t { kAuto = 0, kCuda, kNone };

struct VideoReaderOptions {
  int32_t threads = 0;  // decoder threads; 0 = FFmpeg's choice
  // Frame threading delays each frame by about one frame per thread; low latency uses slice threads only.
  bool low_latency = false;
  VideoHwDecode hw_decode = VideoHwDecode::kNone;
  int32_t cuda_device = 0;  // NVDEC's device: the CUDA backend's (BackendRegistry::options()), as the caller says
  // > 0: frames come out scaled to this size in the colour conversion (one pass over the decoded picture, instead
  // of a full-size RGB frame to be resized later); keep_aspect fits them inside it instead.
  int32_t scale_width = 0;
  int32_t scale_height = 0;
  bool scale_keep_aspect = false;
  // NVDEC's frames stay in device memory (VideoFrame::device, NV12, at the decoded size: scale_* applies to frames
  // that come to the host) instead of coming to the host as RGB, when the frame is on the device, unturned and of
  // the stream's size; otherwise, and once wrapping fails or the consumer calls device_frames_end(), frames come as
  // RGB and VideoInfo::decode says why. The consumer converts them (ColorConversion::kNv12ToRgb on the CUDA backend).
  bool device_frames = false;
  // Device frames a consumer may hold at once beyond the decoder's own: FFmpeg's surface pool grows by this many
  // (at most 8: NVDEC takes at most 32 surfaces, and a stream's references may need up to 21). A consumer holding
  // more stalls the decoder.
  int32_t device_frames_held = 8;
};

// A stream's colour description, as FFmpeg's enums give it (AVColorSpace, AVColorRange, AVColorPrimaries,
// AVColorTransferCharacteristic; 2 / 0 = unspecified): what the reader decoded with and what a writer tags its output
// with and encodes by.
struct VideoColour {
  int32_t space = 2;
  int32_t range = 0;
  int32_t primaries = 2;
  int32_t transfer = 2;
};

struct VideoInfo {
  std::string path;
  std::string container;  // FFmpeg's demuxer name
  std::string codec;      // e.g. h264, vp9
  int32_t width = 0;
  int32_t height = 0;
  Rational time_base;    // of the video stream's timestamps
  Rational frame_rate;   // average; 0/1 when unknown
  int64_t frames = 0;    // declared or estimated from the duration; 0 when unknown
  bool frames_estimated = false;  // frames is duration x rate (the container declares no count)
  double duration_s = 0;
  int32_t audio_streams = 0;
  VideoColour colour;  // the video stream's
  // "software (8 threads)", "cuda (NVDEC)", or the software fallback with the reason; with NVDEC final only once
  // the first frame is read (FFmpeg starts the hwaccel then, and falls back to software when it cannot).
  std::string decode;
};

// A decoded NV12 picture in CUDA device memory (VideoReaderOptions::device_frames): valid while the frame lives.
struct DeviceVideoFrame {
  int32_t cuda_device = 0;
  const uint8_t* planes = nullptr;  // device pointer: `height` luma rows, then the chroma rows from chroma_row on
  int64_t pitch = 0;                // bytes per row of both planes
  int32_t chroma_row = 0;
  int32_t width = 0, height = 0;
  YuvMatrix matrix = YuvMatrix::kBt601;
  bool full_range = false;
  std::shared_ptr<void> hold;  // the decoder's frame (its surface returns to FFmpeg's pool when released)

  // Both planes as one u8 1-channel view (device memory), and the conversion to RGB that reads it.
  ImageView nv12() const {
    ImageView v;
    v.data = const_cast<uint8_t*>(planes);
    v.width = width;
    v.height = chroma_row + (height + 1) / 2;
    v.row_stride = pitch;
    return v;
  }
  ColorParams to_rgb() const {
    ColorParams p;
    p.conversion = ColorConversion::kNv12ToRgb;
    p.nv12_chroma_row = chroma_row;
    p.yuv_matrix = matrix;
    p.yuv_full_range = full_range;
    return p;
  }
};

struct VideoFrame {
  // width x height x 3 of the first frame (a later size change is scaled to it), or the reader's scale size; empty
  // when the frame is on the device
  ImageBuffer rgb;
  std::shared_ptr<const DeviceVideoFrame> device;  // device_frames: the picture, still on the GPU
  int64_t pts = 0;       // in VideoInfo::time_base, increasing from frame to frame
  double time_s = 0;     // pts in seconds from the stream's start time
  int64_t index = 0;     // 0, 1, 2 ... in the order read
};

class VideoReader {
 public:
  // IoError for a missing file or a capture device that cannot be opened, UnsupportedFormat for a file that is no
  // video, has no video stream or a codec this FFmpeg build cannot decode; the message starts with the path.
  static Result<std::unique_ptr<VideoReader>> open(const std::string& path, const VideoReaderOptions& options = {});
  virtual ~VideoReader() = default;

  virtual const VideoInfo& info() const = 0;
  // The next frame; *end = true (and `frame` untouched) after the last one.
  virtual Status read(VideoFrame* frame, bool* end) = 0;
  // device_frames ends here (`why` is added to info().decode): `frame`, when it holds one of this reader's device
  // frames, comes to the host as RGB as frames not kept on the device do (scaled and all), and so does every later
  // frame. For a consumer that cannot use a frame on the device after all. From the thread that reads.
  virtual Status device_frames_end(VideoFrame* frame, const std::string& why) = 0;
  // Each problem met so far ("packet 212: Invalid data found when processing input"), at most the first 20.
  virtual const std::vector<std::string>& errors() const = 0;
  virtual int64_t error_count() const = 0;
};

// True when FFmpeg can open `path` as a capture device name (/dev/video*).
bool video_is_capture_device(const std::string& path);

}  // namespace kiln
