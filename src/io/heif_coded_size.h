// Before libheif decodes a HEIF/AVIF file: the size every item's own data says it is, against the file's declared
// sizes and max_pixels. Debian's libheif 1.15 checks only the declared sizes (ispe), and its decoders allocate by
// what the stream codes (an HEVC SPS or AV1 sequence header, a grid's or overlay's output size), so a 3 KB file
// claiming 32x24 can make libde265 allocate 620 MB. Every coded item in the file is checked, used or not (a
// thumbnail or depth map of a real file is never larger than the image), so no reference trick can route around it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/status.h"

namespace kiln {

// For every hvc1 / av01 item: each SPS / sequence header in its configuration box and in its data codes at most
// max_pixels, and no more than its ispe (either way round) rounded up to the codec's block (HEVC: 64, the largest
// CTB; AV1: 128, the largest superblock). For every grid / iovl item: its output size at most max_pixels and its ispe. Refused:
// InvalidArgument over max_pixels (as decode_pixels_check), UnsupportedFormat otherwise, naming the item and sizes.
// `has_av1`, when given, is set to whether the file holds an av01 item.
Status heif_coded_size_check(const uint8_t* data, size_t size, int64_t max_pixels, bool* has_av1 = nullptr);

}  // namespace kiln
