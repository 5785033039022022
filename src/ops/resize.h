// The resize op family, internal side: validation, the per-image sampling plan every backend uses (source and
// destination rectangles, column and row tables with OpenCV's conventions) and the per-backend entry points
// (params in include/kiln/ops/resize.h, per-pixel math in resize_px.h).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ops/resize.h"
#include "ops/resize_px.h"

namespace kiln {

class ThreadPool;

// One axis of a resize: for each output coordinate, `taps` source indices (absolute, clamped into the image) and
// float weights; [lo, hi] is the range of source indices used.
struct ResizeAxis {
  int32_t taps = 1;
  int32_t lo = 0;
  int32_t hi = 0;
  std::vector<int32_t> index;
  std::vector<float> weight;
};

// How one image is resized: the source rectangle (the ROI, or the whole image) is resampled to `dst` inside the
// output (the whole output, or the letterbox placement); outside `dst` the output is the pad value.
struct ResizePlan {
  RectI src;
  RectI dst;
  ResizeAxis x;
  ResizeAxis y;
};

// The plan for resizing `src` of an image into an out_width x out_height output.
ResizePlan resize_plan_make(Interp interp, ResizeFit fit, const RectI& src, int32_t out_width, int32_t out_height);

// Plans of a whole call flattened for a GPU: one KilnResizeImage per image, all tables in two arrays.
struct ResizeTables {
  std::vector<KilnResizeImage> images;
  std::vector<int32_t> index;
  std::vector<float> weight;
};
// InvalidArgument when the tables do not fit int32 offsets.
Status resize_tables_append(const ResizePlan& plan, ResizeTables* tables);

// The tables of every image of a call: image i sampled from rois[i] (nullptr: the whole image) into out[i].
Status resize_tables_build(Interp interp, ResizeFit fit, const RectI* rois, const VarShapeBatchView& in,
                           const VarShapeBatchView& out, ResizeTables* tables);

// The letterbox pad of the params as the per-pixel math takes it.
KilnResizePad resize_pad(const ResizeParams& params);

// The source rectangle of image i (its ROI, or the whole image).
RectI resize_source_rect(const ResizeParams& params, const ImageView& image, int64_t i);

// One output row of a resize, before rounding: row `ty` (relative to plan.dst) of `channels` interleaved values
// for each of plan.dst.width pixels. `src` is an HWC image (or one plane of a CHW image, channels = 1) of type
// u8 or f32; `scratch` holds (plan.x.hi - plan.x.lo + 1) * channels floats.
void resize_row_cpu(const ImageView& src, int32_t channels, const ResizePlan& plan, int32_t ty, float* scratch,
                    float* out);

// InvalidArgument when the call's shapes, types or parameters are wrong for resize.
Status resize_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status resize_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
