// HEIF and AVIF files whose streams code a larger picture than the file declares are refused before libheif decodes
// them (io/heif_coded_size.h); real HEIC and AVIF files, and a grid of HEVC tiles, still decode.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "common/test_util.h"
#include "io/codec_format_writers.h"
#include "io/heif_codec_headers.h"
#include "io/heif_coded_size.h"
#include "io/isobmff_items.h"
#include "io/web_codecs.h"

namespace kiln::test {
namespace {

ImageBuffer gradient(int32_t width, int32_t height, int32_t shift) {
  ImageBuffer image;
  image.width = width;
  image.height = height;
  image.channels = 3;
  for (int32_t y = 0; y < height; ++y) {
    for (int32_t x = 0; x < width; ++x) {
      image.pixels.push_back(static_cast<uint8_t>(x * 2 + shift));
      image.pixels.push_back(static_cast<uint8_t>(y * 2));
      image.pixels.push_back(static_cast<uint8_t>(128 + shift));
    }
  }
  return image;
}

double mean_abs_difference(const uint8_t* a, const uint8_t* b, size_t count) {
  double sum = 0;
  for (size_t i = 0; i < count; ++i) sum += std::abs(int(a[i]) - int(b[i]));
  return sum / static_cast<double>(count);
}

const IsobmffItem& coded_item(const std::vector<IsobmffItem>& items) {
  for (const IsobmffItem& item : items) {
    if (item.type == fourcc("hvc1") || item.type == fourcc("av01")) return item;
  }
  ADD_FAILURE() << "no coded item";
  return items.front();
}

// The file with its first ispe box (the coded item's: libheif writes one image) saying width x height.
Bytes with_ispe(Bytes file, uint32_t width, uint32_t height) {
  for (size_t i = 0; i + 16 <= file.size(); ++i) {
    if (std::memcmp(file.data() + i, "ispe", 4) != 0) continue;
    for (int b = 0; b < 4; ++b) {
      file[i + 8 + b] = static_cast<uint8_t>(width >> (24 - 8 * b));
      file[i + 12 + b] = static_cast<uint8_t>(height >> (24 - 8 * b));
    }
    return file;
  }
  ADD_FAILURE() << "no ispe box";
  return file;
}

// Writes ISOBMFF boxes: begin() a box, write its fields, end() it (its size is patched in).
class BoxWriter {
 public:
  Bytes out;
  void u8(uint32_t v) { out.push_back(static_cast<uint8_t>(v)); }
  void u16(uint32_t v) { u8(v >> 8), u8(v); }
  void u32(uint32_t v) { u16(v >> 16), u16(v); }
  void text(const char* s) { out.insert(out.end(), s, s + std::strlen(s)); }
  void bytes(const Bytes& b) { out.insert(out.end(), b.begin(), b.end()); }
  size_t begin(const char* type, int version = -1, uint32_t flags = 0) {
    const size_t at = out.size();
    u32(0);
    text(type);
    if (version >= 0) u32(uint32_t(version) << 24 | flags);
    return at;
  }
  void end(size_t at) {
    const uint32_t size = static_cast<uint32_t>(out.size() - at);
    for (int b = 0; b < 4; ++b) out[at + b] = static_cast<uint8_t>(size >> (24 - 8 * b));
  }
};

struct HevcTile {
  Bytes hvcc;
  Bytes data;
  uint32_t width = 0;
  uint32_t height = 0;
};

HevcTile hevc_tile(const ImageBuffer& image) {
  const Bytes file = heif_encode(image, false);
  Result<std::vector<IsobmffItem>> items = isobmff_items(file.data(), file.size());
  EXPECT_TRUE(items.is_ok());
  const IsobmffItem& item = coded_item(*items);
  HevcTile tile;
  tile.hvcc.assign(item.hvcc.at(0).data, item.hvcc.at(0).data + item.hvcc.at(0).size);
  tile.data = isobmff_item_data(item, file.size()).value();
  tile.width = item.ispe_width;
  tile.height = item.ispe_height;
  return tile;
}

struct GridLayout {
  uint32_t output_width = 0;  // the grid data's canvas; the grid's ispe is always the two tiles side by side
  uint32_t output_height = 0;
  uint32_t right_ispe_width = 0;  // 0: the right tile's own size
};

// A HEIC whose primary image (item 3) is a 1 x 2 grid of the two HEVC tiles (items 1 and 2), as phones write them.
Bytes heic_grid(const HevcTile& left, const HevcTile& right, const GridLayout& layout) {
  BoxWriter file;
  uint32_t mdat_start = 0;
  for (int pass = 0; pass < 2; ++pass) {  // the first pass finds where mdat starts
    file.out.clear();
    size_t box = file.begin("ftyp");
    file.text("heic"), file.u32(0), file.text("mif1"), file.text("heic");
    file.end(box);
    const size_t meta = file.begin("meta", 0);
    box = file.begin("hdlr", 0);
    file.u32(0), file.text("pict"), file.u32(0), file.u32(0), file.u32(0), file.u8(0);
    file.end(box);
    box = file.begin("pitm", 0);
    file.u16(3);
    file.end(box);
    const size_t iinf = file.begin("iinf", 0);
    file.u16(3);
    for (uint32_t id = 1; id <= 3; ++id) {
      box = file.begin("infe", 2, id < 3 ? 1 : 0);  // tiles hidden
      file.u16(id), file.u16(0), file.text(id < 3 ? "hvc1" : "grid"), file.u8(0);
      file.end(box);
    }
    file.end(iinf);
    const size_t iref = file.begin("iref", 0);
    box = file.begin("dimg");
    file.u16(3), file.u16(2), file.u16(1), file.u16(2);
    file.end(box);
    file.end(iref);
    const size_t iprp = file.begin("iprp");
    const size_t ipco = file.begin("ipco");
    for (const HevcTile* tile : {&left, &right}) {
      box = file.begin("hvcC");
      file.bytes(tile->hvcc);
      file.end(box);
    }
    const uint32_t ispes[3][2] = {{left.width, left.height},
                                  {layout.right_ispe_width != 0 ? layout.right_ispe_width : right.width, right.height},
                                  {left.width + right.width, left.height}};
    for (const auto& ispe : ispes) {
      box = file.begin("ispe", 0);
      file.u32(ispe[0]), file.u32(ispe[1]);
      file.end(box);
    }
    file.end(ipco);
    box = file.begin("ipma", 0);
    file.u32(3);
    file.u16(1), file.u8(2), file.u8(0x81), file.u8(3);
    file.u16(2), file.u8(2), file.u8(0x82), file.u8(4);
    file.u16(3), file.u8(1), file.u8(5);
    file.end(box);
    file.end(iprp);
    box = file.begin("iloc", 1);
    file.u8(0x44), file.u8(0), file.u16(3);  // 4-byte offsets and lengths, no base offset
    file.u16(1), file.u16(0), file.u16(0), file.u16(1), file.u32(mdat_start), file.u32(left.data.size());
    file.u16(2), file.u16(0), file.u16(0), file.u16(1), file.u32(mdat_start + left.data.size());
    file.u32(right.data.size());
    file.u16(3), file.u16(1), file.u16(0), file.u16(1), file.u32(0), file.u32(8);  // in idat
    file.end(box);
    box = file.begin("idat");
    file.u8(0), file.u8(0), file.u8(0), file.u8(1), file.u16(layout.output_width), file.u16(layout.output_height);
    file.end(box);
    file.end(meta);
    box = file.begin("mdat");
    mdat_start = static_cast<uint32_t>(file.out.size());
    file.bytes(left.data);
    file.bytes(right.data);
    file.end(box);
  }
  return file.out;
}

// Tiles of 128x64: x265 in libheif 1.15 takes them as they are (a smaller height is padded and wrapped in a grid).
TEST(CodecHeifSize, AGridOfHevcTilesDecodes) {
  const ImageBuffer left_image = gradient(128, 64, 0);
  const ImageBuffer right_image = gradient(128, 64, 60);
  const HevcTile left = hevc_tile(left_image);
  const HevcTile right = hevc_tile(right_image);
  ASSERT_EQ(left.width, 128u);
  ASSERT_EQ(left.height, 64u);
  const Bytes file = heic_grid(left, right, {256, 64});
  EXPECT_TRUE(heif_coded_size_check(file.data(), file.size(), 256 * 64).is_ok());
  Result<DecodedImage> image = heif_decode(file.data(), file.size(), 256 * 64);
  ASSERT_TRUE(image.is_ok()) << image.status().message();
  ASSERT_EQ(image->width, 256);
  ASSERT_EQ(image->height, 64);
  ASSERT_EQ(image->channels, 3);
  for (int32_t y = 0; y < 64; ++y) {
    const uint8_t* row = image->pixels.data() + size_t(y) * 256 * 3;
    EXPECT_LT(mean_abs_difference(row, left_image.pixels.data() + size_t(y) * 128 * 3, 128 * 3), 6.0) << y;
    EXPECT_LT(mean_abs_difference(row + 128 * 3, right_image.pixels.data() + size_t(y) * 128 * 3, 128 * 3), 6.0)
        << y;
  }
}

TEST(CodecHeifSize, AGridIsCheckedForItsCanvasAndEachTile) {
  const HevcTile tile = hevc_tile(gradient(128, 64, 0));
  const Bytes canvas = heic_grid(tile, tile, {8192, 6144});
  Status status = heif_coded_size_check(canvas.data(), canvas.size(), int64_t{64} << 20);
  EXPECT_EQ(status.message(), "heif: the grid item 3 has an output of 8192x6144, larger than its declared 256x64 (ispe)");
  status = heif_coded_size_check(canvas.data(), canvas.size(), 1 << 20);
  EXPECT_EQ(status.message(), "heif: the grid item 3: 8192x6144 image exceeds the limit of 1048576 pixels");
  const Bytes small_tile = heic_grid(tile, tile, {256, 64, 16});
  Result<DecodedImage> image = heif_decode(small_tile.data(), small_tile.size(), int64_t{64} << 20);
  ASSERT_FALSE(image.is_ok());
  EXPECT_EQ(image.status().message(),
            "heif: the HEVC stream of item 2 codes a 128x64 picture, larger than the item's declared 16x64 (ispe)");
}

TEST(CodecHeifSize, RealFilesCodeTheSizeTheyDeclare) {
  for (const bool avif : {false, true}) {
    SCOPED_TRACE(avif ? "avif" : "heic");
    const Bytes file = heif_encode(gradient(120, 72, 0), avif);
    Result<std::vector<IsobmffItem>> items = isobmff_items(file.data(), file.size());
    ASSERT_TRUE(items.is_ok()) << items.status().message();
    const IsobmffItem& item = coded_item(*items);
    EXPECT_TRUE(item.has_ispe);
    EXPECT_EQ(item.ispe_width, 120u);
    EXPECT_EQ(item.ispe_height, 72u);
    ASSERT_FALSE(item.extents.empty());
    std::vector<ByteSpan> headers;
    if (avif) {
      ASSERT_EQ(item.av1c.size(), 1u);
      for (const ByteSpan& extent : item.extents) av1_sequence_headers(extent, headers);
    } else {
      ASSERT_EQ(item.hvcc.size(), 1u);
      ASSERT_TRUE(hevc_config_sps(item.hvcc[0], headers).is_ok());
    }
    ASSERT_FALSE(headers.empty());
    Result<CodedSize> coded = avif ? av1_sequence_coded_size(headers[0]) : hevc_sps_coded_size(headers[0]);
    ASSERT_TRUE(coded.is_ok()) << coded.status().message();
    EXPECT_EQ(coded->width, 120u);  // x265 and aom code 120x72 as it is (a multiple of 8)
    EXPECT_EQ(coded->height, 72u);
    EXPECT_TRUE(heif_coded_size_check(file.data(), file.size(), int64_t{120} * 72).is_ok());
    Result<DecodedImage> image = heif_decode(file.data(), file.size(), int64_t{120} * 72);
    ASSERT_TRUE(image.is_ok()) << image.status().message();
    EXPECT_EQ(image->width, 120);
  }
}

// The fuzz corpus's real files: libheif's (x265, aom), ffmpeg's AVIFs (rav1e; SVT-AV1, which codes 152x104 for its
// declared 150x100: within one superblock).
TEST(CodecHeifSize, RealFilesOfOtherEncodersPass) {
  for (const char* name : {"astronaut_small.heic", "astronaut_small.avif", "ffmpeg_rav1e_150x100.avif",
                           "ffmpeg_svtav1_150x100.avif"}) {
    SCOPED_TRACE(name);
    std::ifstream in(source_path(std::string("fuzz/corpus/image_heif/") + name), std::ios::binary);
    const Bytes file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(file.size(), 500u);
    Result<DecodedImage> image = heif_decode(file.data(), file.size(), int64_t{64} << 20);
    ASSERT_TRUE(image.is_ok()) << image.status().message();
    EXPECT_GT(image->width, 0);
  }
}

TEST(CodecHeifSize, AStreamLargerThanItsIspeIsRefused) {
  for (const bool avif : {false, true}) {
    SCOPED_TRACE(avif ? "avif" : "heic");
    // Off by one block of the codec is what real encoders pad to; beyond it is refused.
    const Bytes padded = with_ispe(heif_encode(gradient(128, 64, 0), avif), 127, 63);
    EXPECT_TRUE(heif_coded_size_check(padded.data(), padded.size(), 1 << 20).is_ok());
    const Bytes file = with_ispe(heif_encode(gradient(256, 192, 0), avif), 32, 24);
    Result<DecodedImage> image = heif_decode(file.data(), file.size(), 1 << 20);
    ASSERT_FALSE(image.is_ok());
    EXPECT_EQ(image.status().code(), Errc::kUnsupportedFormat);
    const std::string& message = image.status().message();
    EXPECT_NE(message.find(avif ? "the AV1 stream of item" : "the HEVC stream of item"), std::string::npos) << message;
    EXPECT_NE(message.find("codes a 256x192 picture, larger than the item's declared 32x24 (ispe)"), std::string::npos)
        << message;
  }
}

TEST(CodecHeifSize, AStreamOverMaxPixelsIsRefused) {
  const Bytes file = heif_encode(gradient(256, 192, 0), false);
  const Status status = heif_coded_size_check(file.data(), file.size(), 200 * 100);
  EXPECT_EQ(status.code(), Errc::kInvalidArgument);
  EXPECT_NE(status.message().find("256x192 image exceeds the limit of 20000 pixels"), std::string::npos)
      << status.message();
}

// Found by fuzz_image_heif: a grid declared 32x24 (ispe) whose grid data, read from the file (iloc construction
// method 0), asks for a 27744x22368 canvas; libheif 1.15 allocated it (620 MB) before decoding the tile.
TEST(CodecHeifSize, TheFuzzersOutOfMemoryInputIsRefused) {
  std::ifstream in(source_path("fuzz/corpus/image_heif/oom-hevc-larger-than-ispe.heic"), std::ios::binary);
  const Bytes file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(file.size(), 1000u);
  Result<DecodedImage> image = heif_decode(file.data(), file.size(), int64_t{64} << 20);
  ASSERT_FALSE(image.is_ok());
  EXPECT_EQ(image.status().message(), "heif: the grid item 2: 27744x22368 image exceeds the limit of 67108864 pixels");
  const Status unlimited = heif_coded_size_check(file.data(), file.size(), int64_t{1} << 40);
  EXPECT_EQ(unlimited.message(),
            "heif: the grid item 2 has an output of 27744x22368, larger than its declared 32x24 (ispe)");
}

// Found by fuzz_image_heif: a damaged AV1 stream on which Debian's dav1d 1.0.0 crashes (SIGSEGV); kiln decodes AV1
// with aom, which refuses it.
TEST(CodecHeifSize, ADamagedAv1StreamIsAnErrorNotACrash) {
  std::ifstream in(source_path("fuzz/corpus/image_heif/crash-dav1d-segv.avif"), std::ios::binary);
  const Bytes file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(file.size(), 1000u);
  Result<DecodedImage> image = heif_decode(file.data(), file.size(), int64_t{64} << 20);
  ASSERT_FALSE(image.is_ok());
  EXPECT_NE(image.status().message().find("heif: cannot decode"), std::string::npos) << image.status().message();
}

TEST(CodecHeifSize, DamagedBoxesAreRefusedNotRead) {
  const Bytes file = heif_encode(gradient(64, 48, 0), false);
  Result<std::vector<IsobmffItem>> whole = isobmff_items(file.data(), file.size());
  ASSERT_TRUE(whole.is_ok());
  // Every cut of the file: an error or fewer items, never a read past the end (ASan in make sanitize).
  for (size_t cut = 0; cut < file.size(); cut += 7) {
    Result<std::vector<IsobmffItem>> items = isobmff_items(file.data(), cut);
    if (items.is_ok()) {
      EXPECT_LE(items->size(), whole->size());
    }
    (void)heif_coded_size_check(file.data(), cut, 1 << 20);
  }
}

}  // namespace
}  // namespace kiln::test
