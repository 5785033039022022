// Per-thread image encoders producing exactly one HDF5 chunk per image: a zstd frame (filter 32015), a zlib
// stream (what HDF5's deflate filter reads) or the raw bytes. f32 images become H*W*4 little-endian bytes.
#pragma once

#include <cstdint>
#include <memory>

#include "apps/render/image_sink.h"
#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

// width/height/type/channels: the shape every image must have (0 width: no shape check; channels 1 gray, 3 RGB).
// Level: zstd ZSTD_minCLevel()..ZSTD_maxCLevel(), gzip 0..9, ignored for none.
Result<std::unique_ptr<ImageEncoder>> hdf5_encoder_create(Compression compression, int32_t level, int32_t width,
                                                          int32_t height, PixelType type, int32_t channels = 1);

// Validates a compression level for `compression`.
Status hdf5_compression_level_check(Compression compression, int32_t level);

}  // namespace kiln
