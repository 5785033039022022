// The run-based zstd compressor produces ordinary zstd frames that decode to the input, for sparse and dense data.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/reference_render.h"
#include "common/render_helpers.h"
#include "core/cpu_isa.h"
#include "io/zstd_runs.h"
#include "io/zstd_runs_scan.h"

namespace kiln {
namespace {

std::vector<uint8_t> decompress(const std::vector<uint8_t>& frame, size_t size) {
  std::vector<uint8_t> out(size + 1);
  const size_t n = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

void expect_round_trip(const std::vector<uint8_t>& data, size_t period) {
  ZstdRunCompressor zstd(1);
  std::vector<uint8_t> frame{0xEE};  // appends after existing bytes
  ASSERT_TRUE(zstd.compress(data.data(), data.size(), period, frame).is_ok());
  EXPECT_EQ(frame[0], 0xEE);
  frame.erase(frame.begin());
  EXPECT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), data.size());
  EXPECT_EQ(decompress(frame, data.size()), data);
}

TEST(ZstdRuns, RenderedChartsRoundTripAndCompressLikeZstd) {
  RenderParams p;
  for (auto [w, h, lw] : std::vector<std::tuple<int32_t, int32_t, float>>{{800, 500, 3.0f}, {224, 224, 2.0f}}) {
    p.width = w;
    p.height = h;
    p.line_width = lw;
    const auto img = test::render_window(test::random_walk(100, static_cast<uint64_t>(w)), p);
    expect_round_trip(img, 1);
    ZstdRunCompressor runs(1);
    std::vector<uint8_t> ours;
    ASSERT_TRUE(runs.compress(img.data(), img.size(), 1, ours).is_ok());
    std::vector<uint8_t> reference(ZSTD_compressBound(img.size()));
    const size_t n = ZSTD_compress(reference.data(), reference.size(), img.data(), img.size(), 1);
    ASSERT_FALSE(ZSTD_isError(n));
    // Measured: within a few percent of zstd -1 either way on chart images.
    EXPECT_LT(ours.size(), n * 13 / 10) << w << "x" << h;
    EXPECT_GT(runs.last_matched_bytes(), img.size() * 3 / 4);
    std::printf("%dx%d: runs %zu bytes, zstd -1 %zu bytes\n", w, h, ours.size(), n);
  }
}

TEST(ZstdRuns, DenseSparseAndEdgeInputsRoundTrip) {
  std::mt19937 rng(3);
  std::vector<uint8_t> noise(100000);
  for (auto& b : noise) b = static_cast<uint8_t>(rng());
  expect_round_trip(noise, 1);
  expect_round_trip(std::vector<uint8_t>(300000, 255), 1);  // one run longer than a zstd block
  expect_round_trip(std::vector<uint8_t>(7, 1), 1);
  expect_round_trip(std::vector<uint8_t>(1, 9), 1);
  std::vector<uint8_t> stripes(50000);
  for (size_t i = 0; i < stripes.size(); ++i) stripes[i] = (i / 13) % 2 ? 255 : static_cast<uint8_t>(i);
  expect_round_trip(stripes, 1);
}

TEST(ZstdRuns, Float32ImagesUseTheirPixelAsPeriod) {
  std::vector<float> image(200 * 100, 1.0f);
  for (int x = 0; x < 200; ++x) image[(x / 4 + 5) * 200 + x] = 0.25f * static_cast<float>(x % 4);
  std::vector<uint8_t> bytes(image.size() * 4);
  std::memcpy(bytes.data(), image.data(), bytes.size());
  expect_round_trip(bytes, 4);
}

// Maximal runs of at least kZstdMinRun bytes equal to the byte `period` earlier, one byte at a time.
std::vector<std::pair<size_t, size_t>> runs_brute_force(const std::vector<uint8_t>& data, size_t period) {
  std::vector<std::pair<size_t, size_t>> runs;
  size_t i = period;
  while (i < data.size()) {
    if (data[i] != data[i - period]) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < data.size() && data[end] == data[end - period]) ++end;
    if (end - i >= kZstdMinRun) runs.emplace_back(i, end);
    i = end;
  }
  return runs;
}

std::vector<std::pair<size_t, size_t>> runs_of(const std::vector<ZSTD_Sequence>& sequences) {
  std::vector<std::pair<size_t, size_t>> runs;
  size_t at = 0;
  for (const auto& seq : sequences) {
    at += seq.litLength;
    runs.emplace_back(at, at + seq.matchLength);
    at += seq.matchLength;
  }
  return runs;
}

// Every scanner (portable SWAR, AVX2, AVX-512 where the CPU has it) finds exactly the maximal runs,
// for runs that start and end anywhere in a 64-byte block, blocks that repeat, and tails shorter than a block.
TEST(ZstdRuns, ScannersFindExactlyTheMaximalRuns) {
  std::mt19937 rng(11);
  ZstdRunScratch scratch;
  for (size_t period : {1, 2, 3, 4}) {
    for (size_t size : {0, 1, 5, 63, 64, 65, 66, 129, 200, 4096, 10007, 100003, 100003 + 64}) {
      // Sparse and dense edges: 100003 + 64 has one to 64 edges per 64 bytes (the edge array's growth and the
      // words with more than the eight edges written at once).
      const uint32_t repeat_per_mille = size == 100003 + 64 ? 500 : size > 4096 ? 997 : 900;
      std::vector<uint8_t> data(size);
      for (size_t i = 0; i < size; ++i) {
        const bool repeat = i >= period && rng() % 1000 < repeat_per_mille;  // runs broken at random places
        data[i] = repeat ? data[i - period] : static_cast<uint8_t>(rng() % 3);
      }
      const auto expected = runs_brute_force(data, period);
      std::vector<ZSTD_Sequence> sequences;
      const size_t matched = zstd_runs_find(data.data(), data.size(), period, sequences, scratch);
      EXPECT_EQ(runs_of(sequences), expected) << "portable, period " << period << ", size " << size;
      size_t expected_matched = 0;
      for (auto [start, end] : expected) expected_matched += end - start;
      EXPECT_EQ(matched, expected_matched);
      if (cpu_isa_best() >= CpuIsa::kAvx2) {
        sequences.clear();
        zstd_runs_find_avx2(data.data(), data.size(), period, sequences, scratch);
        EXPECT_EQ(runs_of(sequences), expected) << "avx2, period " << period << ", size " << size;
      }
      if (zstd_runs_avx512_supported()) {
        sequences.clear();
        EXPECT_EQ(zstd_runs_find_avx512(data.data(), data.size(), period, sequences, scratch), expected_matched);
        EXPECT_EQ(runs_of(sequences), expected) << "avx512, period " << period << ", size " << size;
      }
    }
  }
}

TEST(ZstdRuns, EmptyInputAndBadPeriod) {
  ZstdRunCompressor zstd(1);
  std::vector<uint8_t> frame;
  EXPECT_TRUE(zstd.compress(nullptr, 0, 1, frame).is_ok());
  EXPECT_EQ(zstd.compress(frame.data(), frame.size(), 0, frame).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
