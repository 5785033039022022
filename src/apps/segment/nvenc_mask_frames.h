// kiln segment's mask outputs encoded by NVENC from device memory (VideoWriterOptions::device_frames): a frame whose
// smoothed map is on the device gets its mask written straight into the luma rows of the encoder's next CUDA frame
// (the matte op with the encoder's black and white luma, its person pixels counted there) and the constant chroma
// rows copied in from a device block made once, and is encoded from there: none of it comes to the host. A frame
// whose map is on the host, and every frame after the path ended (no device frames from the writer, the matte not
// placed on the map's device, a device failure where fallback is allowed), takes the host way (render, write).
#pragma once

#include <cstdint>
#include <string>

#include "apps/segment/frame_matte.h"
#include "apps/segment/segment_engine.h"
#include "core/backend_block.h"
#include "io/video/video_writer.h"

namespace kiln {

class NvencMaskFrames {
 public:
  // The mask of `map` in `video`'s next device frame, ready for write_device(); returns its person share.
  // NotImplemented: this frame takes the host way. Other errors stop the job (a device failure in mode gpu).
  Result<double> fill(SegmentEngine& engine, const FrameMatte& matte, const ProbabilityMap& map, VideoWriter& video);
  // Why the path ended during the run ("" while it has not, or when the writer never had device frames: its
  // description says why).
  const std::string& ended_why() const { return m_ended_why; }

 private:
  Status chroma_fill(Backend& device, const VideoDeviceFrame& frame);

  bool m_ended = false;
  std::string m_ended_why;
  DeviceBlock m_chroma;  // the chroma rows every mask frame has
  int32_t m_chroma_width = 0, m_chroma_rows = 0;
};

}  // namespace kiln
