// NVENC's input frames in device memory: a pool of FFmpeg CUDA frames (NV12, the encoder's hw_frames_ctx) that a
// caller fills on the device (VideoWriter::device_frame), and host frames copied up into the same pool.
#pragma once

#include <cstdint>

#include "io/video/ffmpeg_util.h"
#include "io/video/video_writer.h"

namespace kiln {

class CudaEncoderFrames {
 public:
  // NV12 frames of width x height (even) on `device` (FFmpeg's CUDA device context).
  static Result<CudaEncoderFrames> make(AVBufferRef* device, int32_t width, int32_t height);
  AVBufferRef* frames_context() const { return m_frames.get(); }

  // The next frame to fill (its planes; the caller adds the colour); the same frame until take(). NotImplemented
  // when FFmpeg's frame does not hold its chroma rows right after the luma at one pitch.
  Result<VideoDeviceFrame> next();
  // The filled frame, stamped with pts, to be sent to the encoder (which takes its own reference).
  Result<AVFrame*> take(int64_t pts);
  // A host frame of the pool's software format, copied into a frame of the pool.
  Result<AVFrame*> upload(const AVFrame& host);

  int64_t taken() const { return m_taken; }

 private:
  AvBufferPtr m_frames;
  AvFramePtr m_next;      // handed out by next(), not yet taken
  AvFramePtr m_uploaded;  // the last upload()'s
  int32_t m_width = 0, m_height = 0;
  int64_t m_taken = 0;
};

}  // namespace kiln
