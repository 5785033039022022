// kiln segment --preview: per input, frames sampled evenly across it with the person probability as a coloured
// overlay, and each frame's latency and person share over time as two small plots.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pictures/canvas.h"
#include "pictures/line_plot.h"

namespace kiln {

inline constexpr int32_t kSegmentPreviewThumbWidth = 280;
inline constexpr int32_t kSegmentPreviewThumbHeight = 210;
inline constexpr float kSegmentPreviewOpacity = 0.55f;  // the overlay's ink at probability 1

struct SegmentPreviewSample {
  int64_t index = 0;
  double time_s = 0;
  double scale = 1;  // input pixel (x, y) is thumbnail pixel (x * scale, y * scale)
  Canvas thumbnail{1, 1};
};

// One input's record, kept by its writer thread. Frames are sampled at a stride that doubles whenever more than eight
// times the frames to show are held, so any length (a live capture too) ends with samples spread across all of it.
class SegmentPreviewStream {
 public:
  explicit SegmentPreviewStream(int32_t frames);

  // Frames come in order; sample() only the ones wanted.
  bool wants(int64_t index) const { return index % m_stride == 0; }
  // `probability`: the person probability as IEEE half at the input's size, width x height (the matte's upsampled
  // map); `rgb`: the frame, at that size or at the one the decoder scaled it to.
  void sample(int64_t index, double time_s, const ImageView& rgb, const uint16_t* probability, int32_t width,
              int32_t height);
  // Every frame written: its latency in ms (NaN when it was dropped) and its share of person pixels (0-1).
  void frame(double time_s, double latency_ms, double person_share);

  // The frames to show, evenly across the samples (the first and the last always), in order.
  std::vector<const SegmentPreviewSample*> picked() const;
  const std::vector<double>& times() const { return m_times; }
  const std::vector<double>& latencies_ms() const { return m_latency_ms; }
  const std::vector<double>& person_shares() const { return m_share; }

 private:
  int32_t m_frames;
  int64_t m_stride = 1;
  std::vector<SegmentPreviewSample> m_samples;
  std::vector<double> m_times, m_latency_ms, m_share;
};

struct SegmentPreviewInput {
  std::string name;
  const SegmentPreviewStream* stream = nullptr;  // nullptr: not processed by this run, `note` says why
  std::string note;
};

// Where one input's pictures and plots went.
struct SegmentPreviewRow {
  std::vector<int32_t> thumb_x;  // each picked sample's thumbnail, left edge
  int32_t thumb_y = 0;           // their top
  PlotFrame latency, share;
};

// One band per input: its name, the picked frames and the two plots.
Result<std::vector<SegmentPreviewRow>> segment_preview_write(const std::string& path,
                                                            const std::vector<SegmentPreviewInput>& inputs,
                                                            int32_t frames);

}  // namespace kiln
