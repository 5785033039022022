// Encoders (zstd / zlib / raw chunks) and the zstd HDF5 filter callback itself.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "apps/render/hdf5_encoder.h"
#include "io/fletcher32.h"
#include "io/h5z_zstd/h5z_zstd_filter.h"

namespace kiln {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed, int alphabet = 4) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng() % static_cast<uint32_t>(alphabet)) * 60;
  return v;
}

ImageView view_of(std::vector<uint8_t>& bytes, int32_t w, int32_t h, PixelType type, int64_t stride = 0) {
  ImageView v;
  v.data = bytes.data();
  v.width = w;
  v.height = h;
  v.type = type;
  v.row_stride = stride > 0 ? stride : static_cast<int64_t>(w) * static_cast<int64_t>(pixel_type_size(type));
  return v;
}

// A zstd chunk without its Fletcher-32 trailer, after checking the trailer (little-endian, as HDF5's filter writes).
std::vector<uint8_t> frame_of(const std::vector<uint8_t>& chunk, size_t start = 0) {
  EXPECT_GE(chunk.size(), start + 4);
  const size_t end = chunk.size() - 4;
  const uint32_t stored =
      chunk[end] | (chunk[end + 1] << 8) | (chunk[end + 2] << 16) | (static_cast<uint32_t>(chunk[end + 3]) << 24);
  EXPECT_EQ(stored, hdf5_fletcher32(chunk.data() + start, end - start));
  return std::vector<uint8_t>(chunk.begin() + static_cast<std::ptrdiff_t>(start),
                              chunk.begin() + static_cast<std::ptrdiff_t>(end));
}

// Calls the filter like HDF5's pipeline does: a malloc'ed buffer in, a malloc'ed buffer out.
std::vector<uint8_t> filter_run(unsigned flags, const std::vector<uint8_t>& in, int level, bool* ok) {
  size_t buf_size = std::max<size_t>(in.size(), 1);
  void* buf = std::malloc(buf_size);
  if (!in.empty()) std::memcpy(buf, in.data(), in.size());
  const unsigned cd[1] = {static_cast<unsigned>(level)};
  const size_t n = kiln_h5z_zstd_filter(flags, 1, cd, in.size(), &buf_size, &buf);
  *ok = n != 0;
  std::vector<uint8_t> out;
  if (n != 0) {
    EXPECT_LE(n, buf_size);
    out.assign(static_cast<uint8_t*>(buf), static_cast<uint8_t*>(buf) + n);
  }
  std::free(buf);
  return out;
}

TEST(Hdf5Encoder, ZstdRoundTripU8) {
  auto pixels = random_bytes(64 * 48, 1);
  auto encoder = hdf5_encoder_create(Compression::kZstd, 1, 64, 48, PixelType::kU8);
  ASSERT_TRUE(encoder.is_ok());
  std::vector<uint8_t> out = {9, 9};  // encoders append
  ASSERT_TRUE((*encoder)->encode(view_of(pixels, 64, 48, PixelType::kU8), out).is_ok());
  ASSERT_GT(out.size(), 6u);
  EXPECT_EQ(out[0], 9);
  const auto frame = frame_of(out, 2);
  EXPECT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), pixels.size());
  std::vector<uint8_t> back(pixels.size());
  EXPECT_EQ(ZSTD_decompress(back.data(), back.size(), frame.data(), frame.size()), pixels.size());
  EXPECT_EQ(back, pixels);
}

TEST(Hdf5Encoder, GzipIsAZlibStream) {
  auto pixels = random_bytes(40 * 30, 2);
  for (int level : {0, 1, 6, 9}) {
    auto encoder = hdf5_encoder_create(Compression::kGzip, level, 40, 30, PixelType::kU8);
    ASSERT_TRUE(encoder.is_ok());
    for (int rep = 0; rep < 2; ++rep) {  // the stream is reset between images
      std::vector<uint8_t> out;
      ASSERT_TRUE((*encoder)->encode(view_of(pixels, 40, 30, PixelType::kU8), out).is_ok());
      // Identical to compress2(), which is what HDF5's deflate filter writes and reads.
      std::vector<uint8_t> ref(compressBound(pixels.size()));
      uLongf ref_size = ref.size();
      ASSERT_EQ(compress2(ref.data(), &ref_size, pixels.data(), pixels.size(), level), Z_OK);
      ref.resize(ref_size);
      EXPECT_EQ(out, ref) << "level " << level;
      std::vector<uint8_t> back(pixels.size());
      uLongf back_size = back.size();
      ASSERT_EQ(uncompress(back.data(), &back_size, out.data(), out.size()), Z_OK);
      EXPECT_EQ(back, pixels);
    }
  }
}

TEST(Hdf5Encoder, NoneCopiesAndPacksStridedRows) {
  const int32_t w = 5, h = 3;
  std::vector<uint8_t> padded(static_cast<size_t>(8 * h), 0xEE);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) padded[static_cast<size_t>(y * 8 + x)] = static_cast<uint8_t>(y * 10 + x);
  }
  auto encoder = hdf5_encoder_create(Compression::kNone, 0, w, h, PixelType::kU8);
  ASSERT_TRUE(encoder.is_ok());
  std::vector<uint8_t> out;
  ASSERT_TRUE((*encoder)->encode(view_of(padded, w, h, PixelType::kU8, 8), out).is_ok());
  ASSERT_EQ(out.size(), static_cast<size_t>(w * h));
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) EXPECT_EQ(out[static_cast<size_t>(y * w + x)], y * 10 + x);
  }
}

TEST(Hdf5Encoder, F32IsLittleEndianBytes) {
  std::vector<float> values = {1.0f, -2.5f, 3.25f, 1e-3f, 0.0f, 7.0f};
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  auto encoder = hdf5_encoder_create(Compression::kZstd, 3, 3, 2, PixelType::kF32);
  ASSERT_TRUE(encoder.is_ok());
  std::vector<uint8_t> out;
  ASSERT_TRUE((*encoder)->encode(view_of(bytes, 3, 2, PixelType::kF32), out).is_ok());
  std::vector<uint8_t> back(bytes.size());
  const auto frame = frame_of(out);
  ASSERT_EQ(ZSTD_decompress(back.data(), back.size(), frame.data(), frame.size()), bytes.size());
  const uint8_t one_le[4] = {0x00, 0x00, 0x80, 0x3f};  // 1.0f
  EXPECT_EQ(std::memcmp(back.data(), one_le, 4), 0);
  EXPECT_EQ(back, bytes);
}

TEST(Hdf5Encoder, RejectsWrongShapeAndLevel) {
  auto pixels = random_bytes(10 * 10, 3);
  auto encoder = hdf5_encoder_create(Compression::kZstd, 1, 12, 10, PixelType::kU8);
  ASSERT_TRUE(encoder.is_ok());
  std::vector<uint8_t> out;
  EXPECT_EQ((*encoder)->encode(view_of(pixels, 10, 10, PixelType::kU8), out).code(), Errc::kInvalidArgument);
  EXPECT_EQ(hdf5_encoder_create(Compression::kZstd, 99, 1, 1, PixelType::kU8).status().code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(hdf5_encoder_create(Compression::kGzip, 10, 1, 1, PixelType::kU8).status().code(),
            Errc::kInvalidArgument);
}

TEST(Hdf5ZstdFilter, RoundTripThroughTheCallback) {
  const auto data = random_bytes(100000, 4);
  bool ok = false;
  const auto packed = filter_run(0, data, 1, &ok);
  ASSERT_TRUE(ok);
  EXPECT_LT(packed.size(), data.size());
  const auto unpacked = filter_run(H5Z_FLAG_REVERSE, packed, 1, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(unpacked, data);
}

TEST(Hdf5ZstdFilter, DecodesFramesWithoutContentSize) {
  const auto data = random_bytes(300000, 5, 200);
  // A frame whose header carries no content size (as streaming writers produce).
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ASSERT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0)));
  std::vector<uint8_t> frame(ZSTD_compressBound(data.size()));
  ZSTD_outBuffer out{frame.data(), frame.size(), 0};
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  ASSERT_EQ(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(cctx);
  frame.resize(out.pos);
  ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  bool ok = false;
  EXPECT_EQ(filter_run(H5Z_FLAG_REVERSE, frame, 1, &ok), data);
  EXPECT_TRUE(ok);
}

TEST(Hdf5ZstdFilter, DecodesConcatenatedFrames) {
  const auto a = random_bytes(5000, 6);
  const auto b = random_bytes(7000, 7);
  std::vector<uint8_t> frames(ZSTD_compressBound(a.size()) + ZSTD_compressBound(b.size()));
  const size_t na = ZSTD_compress(frames.data(), frames.size(), a.data(), a.size(), 1);
  const size_t nb = ZSTD_compress(frames.data() + na, frames.size() - na, b.data(), b.size(), 1);
  frames.resize(na + nb);
  std::vector<uint8_t> both = a;
  both.insert(both.end(), b.begin(), b.end());
  bool ok = false;
  EXPECT_EQ(filter_run(H5Z_FLAG_REVERSE, frames, 1, &ok), both);
  EXPECT_TRUE(ok);
}

TEST(Hdf5ZstdFilter, FailsOnCorruptOrTruncatedInput) {
  const auto data = random_bytes(50000, 8);
  bool ok = true;
  auto packed = filter_run(0, data, 1, &ok);
  ASSERT_TRUE(ok);
  auto truncated = packed;
  truncated.resize(packed.size() / 2);
  filter_run(H5Z_FLAG_REVERSE, truncated, 1, &ok);
  EXPECT_FALSE(ok);
  std::vector<uint8_t> garbage = random_bytes(1000, 9, 256);
  filter_run(H5Z_FLAG_REVERSE, garbage, 1, &ok);
  EXPECT_FALSE(ok);
  // A header whose content size lies: decoded by streaming, never past the buffer (sizes checked in filter_run).
  auto lying = packed;
  lying[5] ^= 0x40;
  filter_run(H5Z_FLAG_REVERSE, lying, 1, &ok);
}

}  // namespace
}  // namespace kiln
