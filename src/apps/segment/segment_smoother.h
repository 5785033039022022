// A stream's person probability after each frame, smoothed in time (SegmentSettings::temporal) and, with
// largest_component, kept to its largest region. Where the frame's model output was left in device memory
// (SegmentFrame::output_device) the stream's map lives there too: the probability op makes and smooths it in one
// pass on the device, and it comes to the host only when asked (host()) or for the largest-component filter (on the
// small map). Otherwise, and for the rest of the stream once a device step could not run, on the host, with the
// same per-pixel math (the same bits).
#pragma once

#include <cstdint>
#include <vector>

#include "apps/segment/segment_engine.h"

namespace kiln {

class SegmentSmoother {
 public:
  // width x height: the map a frame dropped before any was inferred gets (all background).
  SegmentSmoother(SegmentEngine& engine, int32_t width, int32_t height)
      : m_engine(engine), m_width(width), m_height(height) {}

  // The smoothed map after `frame` (a dropped frame keeps the last one), valid until the next call. A device step
  // that cannot run (not placed on the device; a failure where fallback is allowed) brings the stream's state to the
  // host and ends device probabilities for the job (SegmentEngine::device_probabilities_end); a device failure in
  // mode gpu is the error. The frame's device output is let go; one that cannot come down either (the device gone,
  // mode auto) marks the frame dropped: it gets the last map, from the host.
  Result<ProbabilityMap> update(SegmentFrame& frame, const SegmentSettings& settings);
  // The last map on the host (brought down once when it is on the device).
  Result<const float*> host();
  int32_t width() const { return m_width; }
  int32_t height() const { return m_height; }

 private:
  Status update_on_device(const SegmentFrame& frame, const SegmentSettings& settings);
  void update_on_host(const SegmentFrame& frame, const SegmentSettings& settings);
  // The frame's device output brought down and made its probability on the host (frame.prob).
  static Status output_to_host(SegmentFrame& frame);
  Status state_to_host();
  // The map to return: the state, or with largest_component a host copy keeping only the largest region.
  Result<ProbabilityMap> result(const SegmentSettings& settings);
  ImageView device_view() const;

  SegmentEngine& m_engine;
  std::vector<float> m_state;  // on the host (m_on_device false)
  DeviceBlock m_device_state;  // the state on the device (m_on_device)
  bool m_on_device = false;
  std::vector<float> m_output;  // largest_component's map, or host()'s copy of the device state
  bool m_output_current = false;  // m_output holds the last map
  std::vector<uint8_t> m_scratch;
  int32_t m_width = 0, m_height = 0;
};

}  // namespace kiln
