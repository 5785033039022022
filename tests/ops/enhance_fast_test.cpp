// The fixed-point unsharp blur of the CPU (enhance_blur_loops.h; the generic and avx2 variants) against the float
// reference (KILN_CPU_ISA=scalar). Tolerance: the blurred value may differ from the reference's by one level (the
// kernel is quantized to integer weights and the horizontal rows rounded to 8.6 fixed point; the plan's error bound
// keeps |fixed - float| below one level), so the unsharp output may differ by ceil(percent / 100) levels, or by
// (threshold + 1) * percent / 100 where the two blurs fall on both sides of the threshold test
// (enhance_unsharp_tolerance). Most values must still be equal (at most 2 %; about 0.1 to 0.5 % differ), and both
// variants and every thread count give the same bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/image_ops_util.h"
#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "kiln/ops/enhance.h"
#include "ops/cpu/enhance_blur_loops.h"
#include "ops/enhance.h"

namespace kiln::test {
namespace {

// Sets the ISA for one scope and puts the previous one back.
class IsaScope {
 public:
  explicit IsaScope(CpuIsa isa) { cpu_isa_set(isa); }
  ~IsaScope() { cpu_isa_set(m_saved); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  CpuIsa m_saved = cpu_isa_active();
};

// The fast variants this CPU runs.
std::vector<CpuIsa> fast_isas() {
  std::vector<CpuIsa> isas = {CpuIsa::kGeneric};
  if (cpu_isa_best() == CpuIsa::kAvx2) isas.push_back(CpuIsa::kAvx2);
  return isas;
}

std::vector<ImageShape> shapes() {
  return {{1, 1, 3}, {2, 3, 1}, {5, 4, 4}, {13, 7, 3}, {64, 48, 1}, {97, 61, 3}, {83, 40, 4}, {300, 21, 3}};
}

// Random values, and smooth ones (sums of slow waves: blurred values then fall anywhere between two levels).
VarShapeBatch inputs(uint32_t seed, bool smooth) {
  VarShapeBatch b = random_batch(shapes(), seed);
  if (!smooth) return b;
  for (int64_t i = 0; i < b.count(); ++i) {
    const ImageView& v = b[i];
    for (int32_t y = 0; y < v.height; ++y) {
      for (int32_t x = 0; x < v.width * v.channels; ++x) {
        const double t = 127.5 + 90 * std::sin(x * 0.071 + y * 0.023 + i) + 37 * std::cos(y * 0.13 - x * 0.011);
        v.row<uint8_t>(y)[x] = static_cast<uint8_t>(std::lround(std::fmin(255.0, std::fmax(0.0, t))));
      }
    }
  }
  return b;
}

// The blur or the op under `isa`, one image at a time.
VarShapeBatch blur_with(CpuIsa isa, const VarShapeBatch& in, float sigma) {
  const IsaScope scope(isa);
  std::vector<ImageShape> s;
  for (const auto& v : in.images()) s.push_back({v.width, v.height, v.channels});
  VarShapeBatch out = filled_batch(s);
  for (int64_t i = 0; i < in.count(); ++i) EXPECT_TRUE(enhance_gaussian_blur_cpu(in[i], out[i], sigma).is_ok());
  return out;
}

VarShapeBatch enhance_with(CpuIsa isa, const EnhanceParams& p, const VarShapeBatch& in, ThreadPool* pool = nullptr) {
  const IsaScope scope(isa);
  std::vector<ImageShape> s;
  for (const auto& v : in.images()) s.push_back({v.width, v.height, v.channels});
  VarShapeBatch out = filled_batch(s);
  const Status st = enhance(p, in.view(), out.view(), cpu_exec(pool));
  EXPECT_TRUE(st.is_ok()) << st.message();
  return out;
}

// Fast vs reference: every value within `tolerance`, and at most `max_unequal` of all values differ at all.
void expect_close(const VarShapeBatch& fast, const VarShapeBatch& ref, double tolerance, double max_unequal,
                  const std::string& what) {
  int64_t unequal = 0, values = 0;
  for (int64_t i = 0; i < ref.count(); ++i) {
    const ImageDiff d = image_diff(fast[i], ref[i], tolerance);
    EXPECT_EQ(d.over, 0) << what << " image " << i << ": " << d.first << " (max " << d.max_abs << ")";
    unequal += image_diff(fast[i], ref[i], 0.0).over;
    values += static_cast<int64_t>(ref[i].width) * ref[i].height * ref[i].channels;
  }
  EXPECT_LE(static_cast<double>(unequal), max_unequal * static_cast<double>(values)) << what << ": " << unequal
                                                                                      << " of " << values;
}

TEST(EnhanceFast, FixedKernelCoversEveryRadius) {
  std::vector<float> sigmas = {kEnhanceMaxRadius};
  for (float s = 0.05f; s < kEnhanceMaxRadius; s = s < 3 ? s + 0.05f : s * 1.07f) sigmas.push_back(s);
  double worst = 0;
  for (float s : sigmas) {
    {
      const std::vector<float> w = enhance_gaussian_weights(s);
      const auto ksize = static_cast<int32_t>(w.size());
      EnhanceBlurFixed f;
      double bound = 0;
      ASSERT_TRUE(enhance_blur_fixed_make(w.data(), ksize, 150, 0, &f, &bound)) << "sigma " << s << " bound " << bound;
      worst = std::fmax(worst, bound);
      // Both kernels sum to exactly one in their fixed point.
      int64_t sum_h = f.weight_h[0], sum_v = f.weight_v[0];
      for (int32_t k = 1; k <= f.radius; ++k) sum_h += 2 * f.weight_h[k], sum_v += 2 * f.weight_v[k];
      EXPECT_EQ(sum_h, int64_t{1} << (f.shift_h + 6)) << s;
      EXPECT_EQ(sum_v, int64_t{1} << (f.shift_v - 6)) << s;
      EXPECT_LE(f.shift_v - 6, 17) << s;  // vertical int32 sums <= 16320 * 2^Sv
    }
  }
  EXPECT_LT(worst, 0.5);
  // Asymmetric or even kernels are refused (the float loops run them).
  const float even[2] = {0.5f, 0.5f};
  EnhanceBlurFixed f;
  double bound = 0;
  EXPECT_FALSE(enhance_blur_fixed_make(even, 2, 100, 0, &f, &bound));
}

TEST(EnhanceFast, AvxDivisionByHundredIsExact) {
  // unsharp16: (n * 5243) >> 19 == n / 100 for every n = |d| * (percent % 100) <= 255 * 99.
  for (int32_t n = 0; n <= 255 * 99; ++n) ASSERT_EQ((n * 5243) >> 19, n / 100) << n;
}

TEST(EnhanceFast, ToleranceFollowsPercentAndThreshold) {
  EXPECT_EQ(enhance_unsharp_tolerance(150, 0), 2);
  EXPECT_EQ(enhance_unsharp_tolerance(100, 0), 1);
  EXPECT_EQ(enhance_unsharp_tolerance(50, 0), 1);
  EXPECT_EQ(enhance_unsharp_tolerance(120, 3), 4);  // 4 * 120 / 100
  EXPECT_EQ(enhance_unsharp_tolerance(10000, 0), 100);
  EXPECT_EQ(enhance_unsharp_tolerance(10000, 7), 255);
}

TEST(EnhanceFast, BlurWithinOneLevelOfReference) {
  for (bool smooth : {false, true}) {
    const VarShapeBatch in = inputs(31, smooth);
    for (float sigma : {0.3f, 0.8f, 1.0f, 2.0f, 4.3f, 12.0f, 50.0f}) {
      const VarShapeBatch ref = blur_with(CpuIsa::kScalar, in, sigma);
      for (CpuIsa isa : fast_isas()) {
        const std::string what = std::string(cpu_isa_name(isa)) + (smooth ? " smooth" : " random") + " sigma " +
                                 std::to_string(sigma);
        expect_close(blur_with(isa, in, sigma), ref, 1.0, 0.02, what);
      }
    }
  }
}

TEST(EnhanceFast, UnsharpWithinToleranceOfReference) {
  struct Case {
    float radius;
    int32_t percent;
    int32_t threshold;
  };
  const Case cases[] = {{2.0f, 150, 0}, {1.0f, 120, 3}, {0.7f, 300, 0}, {3.0f, 50, 10},
                        {4.3f, 250, 0}, {0.2f, 80, 1},  {50.0f, 1000, 2}};
  for (bool smooth : {false, true}) {
    const VarShapeBatch in = inputs(32, smooth);
    for (const Case& k : cases) {
      EnhanceParams p;
      p.unsharp_radius = k.radius;
      p.unsharp_percent = k.percent;
      p.unsharp_threshold = k.threshold;
      const VarShapeBatch ref = enhance_with(CpuIsa::kScalar, p, in);
      for (CpuIsa isa : fast_isas()) {
        const std::string what = std::string(cpu_isa_name(isa)) + (smooth ? " smooth" : " random") + " radius " +
                                 std::to_string(k.radius) + " percent " + std::to_string(k.percent);
        expect_close(enhance_with(isa, p, in), ref, enhance_unsharp_tolerance(k.percent, k.threshold), 0.02, what);
      }
    }
  }
}

TEST(EnhanceFast, VariantsAndThreadsGiveTheSameBytes) {
  const VarShapeBatch in = random_batch({{640, 480, 3}, {333, 257, 1}, {129, 300, 4}, {7, 3, 3}}, 33);
  EnhanceParams p;
  p.unsharp_radius = 2.0f;
  p.unsharp_percent = 150;
  p.unsharp_threshold = 2;
  p.pil_sharpness = 1.1f;  // the unsharp step then reads a temporary image
  const VarShapeBatch generic = enhance_with(CpuIsa::kGeneric, p, in);
  ThreadPool pool(3);
  for (CpuIsa isa : fast_isas()) {
    ASSERT_NO_FATAL_FAILURE(assert_same_bytes(generic, enhance_with(isa, p, in)));
    ASSERT_NO_FATAL_FAILURE(assert_same_bytes(generic, enhance_with(isa, p, in, &pool)));
  }
  // The blur alone, in place (the fast path copies the input first).
  for (CpuIsa isa : fast_isas()) {
    const VarShapeBatch expected = blur_with(isa, in, 2.0f);
    VarShapeBatch inplace = random_batch({{640, 480, 3}, {333, 257, 1}, {129, 300, 4}, {7, 3, 3}}, 33);
    const IsaScope scope(isa);
    for (int64_t i = 0; i < inplace.count(); ++i) {
      ASSERT_TRUE(enhance_gaussian_blur_cpu(inplace[i], inplace[i], 2.0f).is_ok());
    }
    ASSERT_NO_FATAL_FAILURE(assert_same_bytes(expected, inplace));
  }
}

TEST(EnhanceFast, ScalarModeKeepsTheFloatReference) {
  // The scalar mode is the reference the GPU parity tests compare against: the float loops, whatever the CPU.
  const VarShapeBatch in = inputs(34, true);
  const VarShapeBatch ref = blur_with(CpuIsa::kScalar, in, 2.0f);
  for (int64_t i = 0; i < in.count(); ++i) {
    const ImageView& v = in[i];
    const std::vector<float> w = enhance_gaussian_weights(2.0f);
    for (int32_t y = 0; y < v.height; y += 3) {
      for (int32_t x = 0; x < v.width; x += 2) {
        for (int32_t c = 0; c < v.channels; ++c) {
          float acc = 0.0f;
          for (int32_t k = 0; k < static_cast<int32_t>(w.size()); ++k) {
            const int32_t sy = kiln_enhance_reflect101(y - 6 + k, v.height);
            float row = 0.0f;
            for (int32_t j = 0; j < static_cast<int32_t>(w.size()); ++j) {
              const int32_t sx = kiln_enhance_reflect101(x - 6 + j, v.width);
              row = row + w[static_cast<size_t>(j)] * static_cast<float>(v.row<uint8_t>(sy)[sx * v.channels + c]);
            }
            acc = acc + w[static_cast<size_t>(k)] * row;
          }
          ASSERT_EQ(ref[i].row<uint8_t>(y)[x * v.channels + c], kiln_u8_from_float(acc)) << x << "," << y << "," << c;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::test
