// Temporal smoothing of a stream's person probabilities, as MediaPipe's SegmentationSmoothingCalculator does it:
// each pixel moves from its new value towards its previous one by ratio x uncertainty, where the uncertainty is
// the squared binary entropy of the new value (1 at p = 0.5, 0 at p = 0 or 1). Pixels the model is sure of follow
// the new frame at once (no lag behind motion); unsure ones, where masks flicker, are held steady.
#pragma once

#include <cstddef>

namespace kiln {

// The uncertainty weight of a new probability p: H(p)^2 with H the binary entropy in bits.
float mask_uncertainty(float p);

// current: the new frame's probabilities; state: the previous smoothed ones, replaced by the new smoothed ones.
// ratio 0 copies current into state.
void mask_temporal_smooth(const float* current, float* state, size_t count, float ratio);

}  // namespace kiln
