// The render op family, internal side: validation of render calls and the per-backend entry points (params in
// include/kiln/ops/render.h, per-pixel math in render_px.h).
#pragma once

#include <cstdint>

#include "kiln/ops/render.h"

namespace kiln {

class ThreadPool;

// InvalidArgument unless: the params are valid; every window is a 1-row f32 HWC view of the same seq_len (>= 2)
// and channels (1, or 4 for OHLC); every output is a packed width x height x 1 image of the params' dtype.
Status render_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status render_cpu(const OpCall& call, ThreadPool* pool);

// seq_len and channels of a validated call's windows (0 when it has none).
inline int32_t render_seq_len(const OpCall& call) { return call.in.count > 0 ? call.in[0].width : 0; }
inline int32_t render_channels(const OpCall& call) { return call.in.count > 0 ? call.in[0].channels : 1; }

}  // namespace kiln
