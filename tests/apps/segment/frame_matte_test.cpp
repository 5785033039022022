// The matte: the probability upsampled to the frame, thresholded into a mask or ramped into an alpha.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "apps/segment/frame_matte.h"
#include "kiln/exec.h"

namespace kiln {
namespace {

ImageBuffer solid(int w, int h, uint8_t r, uint8_t g, uint8_t b) {
  ImageBuffer img;
  img.width = w;
  img.height = h;
  img.channels = 3;
  img.pixels.resize(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < img.pixels.size(); i += 3) {
    img.pixels[i] = r;
    img.pixels[i + 1] = g;
    img.pixels[i + 2] = b;
  }
  return img;
}

// Left half of an 8 x 4 map is the person.
std::vector<float> half_person() {
  std::vector<float> p(8 * 4, 0.0f);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) p[y * 8 + x] = 1.0f;
  }
  return p;
}

// The matte through a CPU executor (the segment engine's placement is tested in tests/cli/test_segment_cli.py).
double render(const FrameMatte& m, const ImageBuffer& frame, const std::vector<float>& prob, ImageBuffer* out) {
  ExecOptions cpu;
  cpu.mode = ExecMode::kCpu;
  OpExecutor exec(cpu);
  Result<double> share = m.render(frame.view(), prob.data(), out, exec);
  EXPECT_TRUE(share.is_ok()) << share.status().to_string();
  return share.is_ok() ? share.value() : -1;
}

FrameMatte make(SegmentOutput kind, const MatteRegion& region = {0, 0, 8, 4}, const std::string& bg = "#0000ff") {
  SegmentSettings s;
  auto m = FrameMatte::make(64, 32, 8, 4, region, kind, s, bg, 8);
  EXPECT_TRUE(m.is_ok()) << m.status().to_string();
  return m.value();
}

TEST(FrameMatte, MaskIsTheUpsampledThreshold) {
  const FrameMatte m = make(SegmentOutput::kMask);
  const ImageBuffer frame = solid(64, 32, 200, 100, 50);
  const std::vector<float> p = half_person();
  ImageBuffer out;
  const double share = render(m, frame, p, &out);
  ASSERT_EQ(out.channels, 1);
  EXPECT_NEAR(share, 0.5, 1.0 / 64);
  for (int y = 0; y < 32; ++y) {
    EXPECT_EQ(out.pixels[y * 64 + 0], 255);
    EXPECT_EQ(out.pixels[y * 64 + 63], 0);
  }
  // The boundary sits at the map's edge: frame x = 32 is the map's x = 3.5 + 0.5 = 4 - 0.5 ... half way.
  EXPECT_EQ(out.pixels[10 * 64 + 27], 255);
  EXPECT_EQ(out.pixels[10 * 64 + 36], 0);
}

// The matte op writes the mask run by run; it must be exactly the per-pixel threshold of the upsampled probability
// (which iou() and probabilities() compute), also for values within a rounding of the threshold.
TEST(FrameMatte, MaskRunsEqualThePerPixelThreshold) {
  struct Case {
    int32_t width, height, prob_width, prob_height;
    MatteRegion region;
  };
  const Case cases[] = {{1280, 720, 256, 256, {0, 0, 256, 256}},  // stretched, upsampled
                        {1280, 720, 256, 256, {0, 56, 256, 144}},  // letterboxed
                        {100, 77, 256, 256, {0, 0, 256, 256}},     // downsampled
                        {37, 300, 16, 16, {0.5f, 0, 15, 16}}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::uniform_real_distribution<float> near(-2e-6f, 2e-6f);
  for (const Case& c : cases) {
    SegmentSettings s;
    auto m = FrameMatte::make(c.width, c.height, c.prob_width, c.prob_height, c.region, SegmentOutput::kMask, s, "",
                              8);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    std::vector<float> prob(static_cast<size_t>(c.prob_width) * c.prob_height);
    for (size_t i = 0; i < prob.size(); ++i) {  // blobs of person and background, many values at the threshold
      const float u = uniform(rng);
      prob[i] = u < 0.3f ? s.threshold + near(rng) : u < 0.35f ? s.threshold : (i / 7) % 3 == 0 ? u : 1.0f - u;
    }
    const ImageBuffer frame = solid(c.width, c.height, 0, 0, 0);
    ImageBuffer mask;
    const double share = render(m.value(), frame, prob, &mask);
    std::vector<uint16_t> halves(static_cast<size_t>(c.width) * c.height);
    EXPECT_EQ(share, m->probabilities(prob.data(), halves.data(), nullptr)) << c.width << "x" << c.height;
    EXPECT_GT(share, 0.05);
    EXPECT_LT(share, 0.95);
    EXPECT_EQ(m->iou(prob.data(), mask.view()), 1.0) << c.width << "x" << c.height;  // every pixel agrees
    for (const uint8_t v : mask.pixels) ASSERT_TRUE(v == 0 || v == 255);
  }
}

TEST(FrameMatte, CompositeKeepsThePersonAndReplacesTheRest) {
  const FrameMatte m = make(SegmentOutput::kComposite);
  const ImageBuffer frame = solid(64, 32, 200, 100, 50);
  const std::vector<float> p = half_person();
  ImageBuffer out;
  render(m, frame, p, &out);
  ASSERT_EQ(out.channels, 3);
  const uint8_t* left = &out.pixels[(5 * 64 + 2) * 3];
  const uint8_t* right = &out.pixels[(5 * 64 + 60) * 3];
  EXPECT_EQ(left[0], 200);
  EXPECT_EQ(left[2], 50);
  EXPECT_EQ(right[0], 0);
  EXPECT_EQ(right[2], 255);
}

TEST(FrameMatte, AlphaRampsOverTheFeatherBand) {
  SegmentSettings s;
  s.feather = 0.2f;
  auto m = FrameMatte::make(4, 4, 4, 4, {0, 0, 4, 4}, SegmentOutput::kAlpha, s, "", 8);
  ASSERT_TRUE(m.is_ok());
  std::vector<float> p(16, 0.5f);
  p[0] = 0.39f;
  p[1] = 0.61f;
  p[2] = 0.45f;
  const ImageBuffer frame = solid(4, 4, 10, 20, 30);
  ImageBuffer out;
  render(m.value(), frame, p, &out);
  ASSERT_EQ(out.channels, 4);
  EXPECT_EQ(out.pixels[0 * 4 + 3], 0);
  EXPECT_EQ(out.pixels[1 * 4 + 3], 255);
  EXPECT_EQ(out.pixels[2 * 4 + 3], 64);   // (0.45 - 0.4) / 0.2 = 0.25
  EXPECT_NEAR(out.pixels[3 * 4 + 3], 128, 1);  // at the threshold: half (1/0.2 is not exact in float)
  EXPECT_EQ(out.pixels[2 * 4 + 0], 10);   // colour untouched
}

TEST(FrameMatte, BlurKeepsThePersonSharpAndSmoothsTheBackground) {
  const FrameMatte m = make(SegmentOutput::kBlur);
  ImageBuffer frame = solid(64, 32, 0, 0, 0);
  for (int y = 0; y < 32; ++y) {  // a fine stripe pattern everywhere
    for (int x = 0; x < 64; ++x) {
      if (x % 2 == 0) frame.pixels[(y * 64 + x) * 3] = 255;
    }
  }
  const std::vector<float> p = half_person();
  ImageBuffer out;
  render(m, frame, p, &out);
  EXPECT_EQ(out.pixels[(5 * 64 + 2) * 3], 255);  // person: as it was
  EXPECT_EQ(out.pixels[(5 * 64 + 3) * 3], 0);
  const int a = out.pixels[(5 * 64 + 56) * 3], b = out.pixels[(5 * 64 + 57) * 3];
  EXPECT_LT(std::abs(a - b), 30);  // background: the stripes are gone
  EXPECT_NEAR(a, 128, 40);
}

// Outputs that read the frame refuse one of another size or channel count (the blur's rows and the blend would
// read and write past it); a mask reads no pixels, so any frame does.
TEST(FrameMatte, AFrameOfAnotherShapeIsRefusedWhereItIsRead) {
  const std::vector<float> p = half_person();
  ExecOptions cpu;
  cpu.mode = ExecMode::kCpu;
  OpExecutor exec(cpu);
  ImageBuffer out;
  const ImageBuffer small = solid(32, 32, 1, 2, 3);
  for (const SegmentOutput kind : {SegmentOutput::kBlur, SegmentOutput::kComposite, SegmentOutput::kAlpha}) {
    const Result<double> share = make(kind).render(small.view(), p.data(), &out, exec);
    EXPECT_EQ(share.status().code(), Errc::kInvalidArgument) << static_cast<int>(kind);
  }
  ImageBuffer gray = solid(64, 32, 1, 2, 3);
  gray.channels = 1;
  gray.pixels.resize(64 * 32);
  EXPECT_EQ(make(SegmentOutput::kBlur).render(gray.view(), p.data(), &out, exec).status().code(),
            Errc::kInvalidArgument);
  EXPECT_TRUE(make(SegmentOutput::kMask).render(small.view(), p.data(), &out, exec).is_ok());
}

TEST(FrameMatte, LetterboxRegionMapsBackToTheFrame) {
  // The frame filled rows 1..2 of a 8 x 4 model input: only that band counts.
  std::vector<float> p(8 * 4, 0.0f);
  for (int x = 0; x < 8; ++x) p[1 * 8 + x] = p[2 * 8 + x] = 1.0f;
  const FrameMatte m = make(SegmentOutput::kMask, {0, 1, 8, 2});
  const ImageBuffer frame = solid(64, 32, 1, 2, 3);
  ImageBuffer out;
  EXPECT_NEAR(render(m, frame, p, &out), 1.0, 1e-9);
}

TEST(FrameMatte, BadBackgroundIsRefused) {
  SegmentSettings s;
  auto m = FrameMatte::make(8, 8, 4, 4, {0, 0, 4, 4}, SegmentOutput::kComposite, s, "#12345", 8);
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("#rrggbb"), std::string::npos);
  m = FrameMatte::make(8, 8, 4, 4, {0, 0, 4, 4}, SegmentOutput::kComposite, s, "/no/such/backdrop.png", 8);
  ASSERT_FALSE(m.is_ok());
}

}  // namespace
}  // namespace kiln
