// From the model's person probability (its output size, smoothed) to one output frame: the matte op (kiln/ops/matte.h,
// placed by the engine's executor: the CPU, or the GPU where inference runs) upsamples the probability bilinearly
// (half-pixel centres) to the frame's size over the part of the model input the frame covers (all of it when
// stretched, the letterbox rectangle otherwise) and thresholds it into a mask, or ramps it into an alpha over the
// feather band; the alpha, composite and blur outputs are blended from that alpha on the host
// (kiln_matte_blend_unit; blur's background the blur op's CPU rows), or, for a composite or blur whose frame and map are
// on the device, by the matte op there (blur's background blurred there by the blur op).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kiln/apps/segment.h"
#include "kiln/codec.h"
#include "kiln/exec.h"
#include "kiln/ops/blur.h"
#include "kiln/ops/matte.h"
#include "ops/matte.h"

namespace kiln {

// The part of a prob_width x prob_height map that a frame_width x frame_height frame covers: all of it when the
// frame was stretched to the model's input_width x input_height, the letterbox rectangle (scaled to the map)
// otherwise. The one place both `kiln segment` and kiln.SegmentPipeline take it from.
MatteRegion matte_region(int32_t frame_width, int32_t frame_height, int32_t input_width, int32_t input_height,
                         int32_t prob_width, int32_t prob_height, bool letterbox);

// A person-probability map (f32, 1 channel, packed) on the host, or in the device memory of `device` (a stream's
// smoothed map left where the model's output was).
struct ProbabilityMap {
  ImageView view;
  Backend* device = nullptr;  // null: host memory
  static ProbabilityMap on_host(const float* prob, int32_t width, int32_t height) {
    return {image_view_packed(const_cast<float*>(prob), width, height, 1, PixelType::kF32), nullptr};
  }
};

class FrameMatte {
 public:
  FrameMatte() = default;
  // background: composite only, "#rrggbb" or an image file (scaled to the frame).
  static Result<FrameMatte> make(int32_t frame_width, int32_t frame_height, int32_t prob_width, int32_t prob_height,
                                 const MatteRegion& region, SegmentOutput output, const SegmentSettings& settings,
                                 const std::string& background, int32_t blur_radius);

  // Channels of render()'s frames: mask 1, alpha 4, composite and blur 3.
  int32_t channels() const;
  // `prob`: prob_width x prob_height. Fills `out` (frame size) through `exec` (its report in `report` when given);
  // returns the share of person pixels (mask: at or above the threshold; otherwise alpha >= 128, the same up to a
  // rounding). `frame` (RGB, frame size) is read for alpha, composite and blur only.
  Result<double> render(const ImageView& frame, const float* prob, ImageBuffer* out, OpExecutor& exec,
                        ExecReport* report = nullptr) const;
  // The same from a map on the host or the device: a device map's matte is made there (only the frame-size matte
  // comes down); NotImplemented where `exec` does not place the matte on that device.
  Result<double> render(const ImageView& frame, const ProbabilityMap& map, ImageBuffer* out, OpExecutor& exec,
                        ExecReport* report = nullptr) const;
  // Mask outputs, a map in device memory: its mask written into `device_out` (frame size, device memory of the
  // map's device: an encoder frame's luma rows), `white` for person pixels and `black` for the others; returns the
  // share of person pixels, counted on the device. NotImplemented where `exec` does not place the matte there.
  Result<double> mask_on_device(const ProbabilityMap& map, const ImageView& device_out, uint8_t white, uint8_t black,
                                OpExecutor& exec, ExecReport* report = nullptr) const;
  // Composite and blur outputs whose frame (u8 RGB, frame size) and map are in device memory of the map's device:
  // the composite made there over `background` (the same, device memory: background_rgb() uploaded once, or the
  // frame's blur_on_device) into `device_out` (u8 RGB, frame size, there too); returns the person share, counted
  // there. NotImplemented where `exec` does not place it there.
  Result<double> composite_on_device(const ImageView& frame, const ImageView& background, const ProbabilityMap& map,
                                     const ImageView& device_out, OpExecutor& exec,
                                     ExecReport* report = nullptr) const;
  // Blur outputs: the blurred background of `frame` (u8 RGB, frame size, `device`'s memory) into `device_out` (the
  // same), by the blur op there. NotImplemented where `exec` does not place it there.
  Status blur_on_device(Backend& device, const ImageView& frame, const ImageView& device_out, OpExecutor& exec) const;
  SegmentOutput output() const { return m_output; }
  // composite: the frame-size background (u8 RGB, host memory); other outputs: a view of the frame's size with no
  // pixels.
  ImageView background_rgb() const {
    return image_view_packed(const_cast<uint8_t*>(m_background.data()), m_width, m_height, 3, PixelType::kU8);
  }
  // npy / h5: the upsampled probabilities as IEEE half, frame_width x frame_height; returns the share as above.
  double probabilities(const float* prob, uint16_t* out, ThreadPool* pool) const;
  // The IoU of this frame's mask with a reference mask (channel 0 > 127 is the person; frame size); 1 when both are
  // empty.
  double iou(const float* prob, const ImageView& reference) const;

 private:
  // The matte op with `params` of a device map into `device_out` on the map's device; the person share.
  Result<double> device_matte(const MatteParams& params, const ProbabilityMap& map, const ImageView& device_out,
                              OpExecutor& exec, ExecReport* report) const;
  // The matte op of `map` into `matte` (host, frame size), on the map's device for a device map.
  Status matte_make(const ProbabilityMap& map, uint8_t* matte, OpExecutor& exec, ExecReport* report) const;
  void column_blend_fill(const float* prob, int32_t y, float* column_blend) const;  // the vertical blend of row y
  void prob_row(const float* prob, int32_t y, float* column_blend, float* row) const;
  // Runs rows(begin, end) over every frame row (on the pool when given); counts[y] holds row y's person pixels after.
  double rows_share(const std::function<void(int64_t, int64_t)>& rows, const std::vector<int64_t>& counts,
                    ThreadPool* pool) const;

  int32_t m_width = 0, m_height = 0, m_prob_width = 0, m_prob_height = 0;
  SegmentOutput m_output = SegmentOutput::kMask;
  float m_threshold = 0.5f;
  MatteParams m_params;  // the matte op's: mask for the mask output, alpha for the others
  MatteTaps m_x, m_y;  // the matte op's sampling, for the arrays and the IoU
  std::vector<uint8_t> m_background;  // composite: the frame-size background (RGB)
  BlurParams m_blur;                  // blur: the background's
};

}  // namespace kiln
