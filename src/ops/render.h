// The render op family, internal side: validation of render calls and the per-backend entry points (params in
// include/kiln/ops/render.h, per-pixel math in render_px.h).
#pragma once

#include <cstdint>
#include <functional>

#include "kiln/ops/render.h"

namespace kiln {

class ThreadPool;

// InvalidArgument unless: the params are valid; every window is a 1-row f32 HWC view of the same seq_len (>= 2)
// and channels (1, or 4 for OHLC); every output is a packed width x height x render_image_channels() image of the
// params' dtype.
Status render_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status render_cpu(const OpCall& call, ThreadPool* pool);

// A colour call (params.color) on a backend that renders gray: `render_gray` renders each channel's plane params
// (render_plane_params) into a host scratch batch, then the planes are interleaved into the call's images.
Status render_color_planes(const OpCall& call, const std::function<Status(const OpCall&)>& render_gray);

// seq_len and channels of a validated call's windows (0 when it has none).
inline int32_t render_seq_len(const OpCall& call) { return call.in.count > 0 ? call.in[0].width : 0; }
inline int32_t render_channels(const OpCall& call) { return call.in.count > 0 ? call.in[0].channels : 1; }

}  // namespace kiln
