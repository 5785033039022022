// kiln segment's composite and blur outputs of frames held in device memory (NVDEC's, converted there): the frame is
// blended over the background on the device (the matte op's composite; a composite's background uploaded once per
// stream, a blur's made from each frame there by the blur op), then converted into NVENC's next device frame where
// the writer has them (the color op's rgb_to_nv12: nothing comes to the host), else the composite comes down,
// instead of the frame's RGB and its alpha for a blend on the host. A frame on the host, and every frame after the
// path ended (the matte or the blur not placed on the map's device, a device failure where fallback is allowed),
// takes the host way.
#pragma once

#include <cstdint>
#include <string>

#include "apps/segment/frame_matte.h"
#include "apps/segment/segment_engine.h"
#include "core/backend_block.h"

namespace kiln {

class DeviceComposite {
 public:
  // Whether `frame`'s composite may be made on the device: its RGB and its map there, the path not ended.
  bool wanted(const SegmentFrame& frame) const { return !m_ended && frame.rgb_device.data() != nullptr; }
  // The composite of `frame` (held on the device) over the matte's background (blur: its own blur): in `video`'s
  // device frame (*encoder_frame true: write it with write_device) or in `out`; its person share. NotImplemented:
  // this frame takes the host way. Other errors stop the job (a device failure in mode gpu).
  Result<double> make(SegmentEngine& engine, const FrameMatte& matte, const SegmentFrame& frame,
                      const ProbabilityMap& map, VideoWriter& video, ImageBuffer* out, bool* encoder_frame);
  int64_t made() const { return m_made; }
  const std::string& ended_why() const { return m_ended_why; }
  // Why the composites stopped going into the writer's device frames during the run ("" when they did not).
  const std::string& writer_why() const { return m_writer_why; }

 private:
  // The composite into the writer's next device frame: ok, or NotImplemented (the composite comes down instead), or
  // an error that stops the job.
  Status encoder_frame_fill(SegmentEngine& engine, Backend& device, const ImageView& composite, VideoWriter& video);

  bool m_ended = false;
  bool m_writer_frames_ended = false;  // the writer has no device frames (or no more): composites come down
  std::string m_ended_why;
  std::string m_writer_why;
  int64_t m_made = 0;
  DeviceBlock m_background;  // the matte's background in the map's device memory (blur: the frame's blur)
  DeviceBlock m_composite;   // the frame's composite there
};

}  // namespace kiln
