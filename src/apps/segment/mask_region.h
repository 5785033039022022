// The person's largest region of a probability map: the map keeps the largest 8-connected region of pixels at or
// above the threshold, with the soft edge around it (`edge` pixels); everything else — smaller regions, such as a
// picture of a person in the background or a stray false positive, and their edges — becomes 0.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln {

// prob: width x height, row-major; scratch: reused between calls.
void mask_keep_largest_region(float* prob, int32_t width, int32_t height, float threshold, int32_t edge,
                              std::vector<uint8_t>* scratch);

}  // namespace kiln
