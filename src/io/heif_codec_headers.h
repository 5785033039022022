// The picture size an HEVC or AV1 stream codes, read from its headers without decoding: HEVC's sequence parameter
// set (pic_width/height_in_luma_samples) and AV1's sequence header OBU (max_frame_width/height_minus_1). The decoders
// allocate by these sizes, whatever the container's ispe says (heif_coded_size.cpp compares the two).
#pragma once

#include <cstdint>
#include <vector>

#include "io/isobmff_items.h"
#include "kiln/status.h"

namespace kiln {

struct CodedSize {
  uint32_t width = 0;
  uint32_t height = 0;
};

// An SPS NAL unit, its 2-byte NAL header included, emulation-prevention bytes not yet removed.
Result<CodedSize> hevc_sps_coded_size(ByteSpan nal);
// A sequence header OBU's payload (after the OBU header and size).
Result<CodedSize> av1_sequence_coded_size(ByteSpan payload);

// The SPS NAL units (type 33) of an hvcC payload's arrays; UnsupportedFormat when the hvcC is cut off.
Status hevc_config_sps(ByteSpan hvcc, std::vector<ByteSpan>& sps);
// The SPS NAL units of an item's data: NAL units each behind a 4-byte length, the framing libheif 1.15 gives
// libde265 whatever the hvcC's lengthSizeMinusOne says. A length past the end stops the walk (libheif stops there).
void hevc_stream_sps(ByteSpan data, std::vector<ByteSpan>& sps);
// The sequence header OBUs' payloads in a run of OBUs (av1C's configOBUs, or an item's data); a size past the end
// stops the walk.
void av1_sequence_headers(ByteSpan obus, std::vector<ByteSpan>& headers);

}  // namespace kiln
