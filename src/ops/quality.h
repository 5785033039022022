// The quality op family, internal side: validation, the per-backend entry points and the conversion of the integer
// sums every backend produces into metrics (params in include/kiln/ops/quality.h, per-pixel math in quality_px.h).
#pragma once

#include "kiln/ops/quality.h"
#include "ops/quality_px.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for quality: u8 inputs with 1, 3 or 4
// channels, no output batch, a results array.
Status quality_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status quality_cpu(const OpCall& call, ThreadPool* pool);

// Adds `b` into `a`.
void quality_sums_add(KilnQualitySums& a, const KilnQualitySums& b);
// The metrics (score included, occlusion 0) of an image of `pixels` pixels from its sums. Shared by every backend:
// the variances are computed exactly from the integer sums ((n*sq - sum^2) / n^2 in 128-bit integers), then
// rounded once to double.
QualityMetrics quality_metrics_from_sums(const KilnQualitySums& sums, int64_t pixels);

}  // namespace kiln
