// The series encodings (render styles gasf, gadf, mtf, rp) on the CPU against their definitions evaluated here in
// float64: the angles by arccos and cos/sin (not the algebraic form the op uses), numpy.percentile's linear quantiles
// with pyts' bins (tied quantiles dropped, numpy.digitize(right=True)), the distances; within one grey level, the binary recurrence plot exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "common/render_helpers.h"
#include "core/cpu_isa.h"
#include "kiln/ops/render.h"

namespace kiln {
namespace {

// A random walk of n closes (channels 4: Open/High/Low/Close rows, the close last).
std::vector<float> walk(int32_t n, int32_t channels, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> step(0.0f, 1.0f);
  std::vector<float> values;
  float close = 100.0f;
  for (int32_t t = 0; t < n; ++t) {
    const float open = close;
    close += step(rng);
    if (channels == 4) values.insert(values.end(), {open, std::max(open, close) + 1.0f, std::min(open, close) - 1.0f});
    values.push_back(close);
  }
  return values;
}

std::vector<double> closes_of(const std::vector<float>& values, int32_t channels) {
  std::vector<double> x;
  for (size_t t = channels - 1; t < values.size(); t += channels) x.push_back(values[t]);
  return x;
}

// The n x n field's grey levels (unrounded), row i, column j.
std::vector<double> reference_field(const std::vector<double>& x, const RenderParams& p) {
  const size_t n = x.size();
  const double lo = *std::min_element(x.begin(), x.end());
  const double hi = *std::max_element(x.begin(), x.end());
  std::vector<double> field(n * n);
  std::vector<int> bin(n);
  std::vector<double> w(static_cast<size_t>(p.mtf_bins) * p.mtf_bins, 0.0);
  if (p.style == ChartStyle::kMtf) {
    std::vector<double> sorted = x;
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> quantiles;
    for (int k = 1; k < p.mtf_bins; ++k) {
      const double rank = (n - 1) * (100.0 * k / p.mtf_bins) / 100.0;
      const auto below = static_cast<size_t>(std::floor(rank));
      const size_t above = std::min(below + 1, n - 1);
      quantiles.push_back(sorted[below] + (rank - below) * (sorted[above] - sorted[below]));
    }
    std::vector<double> edges;  // pyts keeps a quantile unless the next one is within 1e-8
    for (size_t k = 0; k < quantiles.size(); ++k) {
      if (k + 1 == quantiles.size() || std::abs(quantiles[k + 1] - quantiles[k]) > 1e-8) edges.push_back(quantiles[k]);
    }
    for (size_t t = 0; t < n; ++t) {  // numpy.digitize(right=True): the edges strictly below
      bin[t] = static_cast<int>(std::count_if(edges.begin(), edges.end(), [&](double e) { return e < x[t]; }));
    }
    for (size_t t = 0; t + 1 < n; ++t) w[static_cast<size_t>(bin[t] * p.mtf_bins + bin[t + 1])] += 1.0;
    for (int r = 0; r < p.mtf_bins; ++r) {
      double sum = 0.0;
      for (int c = 0; c < p.mtf_bins; ++c) sum += w[static_cast<size_t>(r * p.mtf_bins + c)];
      for (int c = 0; c < p.mtf_bins && sum > 0.0; ++c) w[static_cast<size_t>(r * p.mtf_bins + c)] /= sum;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const double phi_i = std::acos(std::clamp((2.0 * x[i] - hi - lo) / (hi - lo), -1.0, 1.0));
      const double phi_j = std::acos(std::clamp((2.0 * x[j] - hi - lo) / (hi - lo), -1.0, 1.0));
      double level = 0.0;
      switch (p.style) {
        case ChartStyle::kGasf: level = (std::cos(phi_i + phi_j) + 1.0) * 127.5; break;
        case ChartStyle::kGadf: level = (std::sin(phi_i - phi_j) + 1.0) * 127.5; break;
        case ChartStyle::kMtf: level = w[static_cast<size_t>(bin[i] * p.mtf_bins + bin[j])] * 255.0; break;
        default: {
          const double d = std::abs(x[i] - x[j]);
          level = p.rp_threshold >= 0 ? (d <= p.rp_threshold ? 255.0 : 0.0) : d / (hi - lo) * 255.0;
        }
      }
      field[i * n + j] = level;
    }
  }
  return field;
}

// Rendered levels (u8, or float32 * 255) of one window.
std::vector<double> render_levels(const std::vector<float>& values, int32_t channels, const RenderParams& p) {
  const int64_t start = 0;
  const int32_t n = static_cast<int32_t>(values.size()) / channels;
  const WindowBatch windows{values.data(), channels, &start, 1, n};
  const size_t pixels = static_cast<size_t>(p.width) * p.height;
  std::vector<uint8_t> image(pixels * pixel_type_size(p.dtype));
  const BatchView out{image.data(), 1, p.width, p.height, 1, p.dtype, static_cast<int64_t>(image.size())};
  const Status status = test::render_cpu_windows(p, windows, out);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  std::vector<double> levels(pixels);
  for (size_t k = 0; k < pixels; ++k) {
    if (p.dtype == PixelType::kU8) {
      levels[k] = image[k];
    } else {
      float v = 0;
      std::memcpy(&v, &image[k * 4], 4);
      levels[k] = v * 255.0;
    }
  }
  return levels;
}

RenderParams encoding(ChartStyle style, int32_t width, int32_t height) {
  RenderParams p;
  p.style = style;
  p.width = width;
  p.height = height;
  return p;
}

// Largest |rendered - reference| over the image; pixel (x, y) shows cell (y * n / height, x * n / width) at its centre.
double worst_error(const std::vector<float>& values, int32_t channels, const RenderParams& p) {
  const std::vector<double> x = closes_of(values, channels);
  const auto n = static_cast<int64_t>(x.size());
  const std::vector<double> field = reference_field(x, p);
  const std::vector<double> levels = render_levels(values, channels, p);
  double worst = 0.0;
  for (int64_t y = 0; y < p.height; ++y) {
    for (int64_t c = 0; c < p.width; ++c) {
      const int64_t i = (2 * y + 1) * n / (2 * p.height);
      const int64_t j = (2 * c + 1) * n / (2 * p.width);
      worst = std::max(worst, std::abs(levels[static_cast<size_t>(y * p.width + c)] - field[static_cast<size_t>(i * n + j)]));
    }
  }
  return worst;
}

TEST(SeriesEncoding, EveryEncodingMatchesItsFloat64Definition) {
  for (const ChartStyle style : {ChartStyle::kGasf, ChartStyle::kGadf, ChartStyle::kMtf, ChartStyle::kRp}) {
    for (const int32_t channels : {1, 4}) {
      for (const PixelType dtype : {PixelType::kU8, PixelType::kF32}) {
        SCOPED_TRACE(std::string(chart_style_name(style)) + " channels " + std::to_string(channels) + " " +
                     pixel_type_name(dtype));
        const std::vector<float> values = walk(37, channels, 7u + channels);
        RenderParams square = encoding(style, 37, 37);
        square.dtype = dtype;
        // u8 rounds the level (0.5) and float32 levels differ from float64 by float rounding.
        EXPECT_LE(worst_error(values, channels, square), dtype == PixelType::kU8 ? 0.5 + 1e-3 : 1e-3);
        RenderParams resized = encoding(style, 64, 20);
        resized.dtype = dtype;
        resized.mtf_bins = 5;
        EXPECT_LE(worst_error(values, channels, resized), dtype == PixelType::kU8 ? 0.5 + 1e-3 : 1e-3);
      }
    }
  }
}

TEST(SeriesEncoding, MtfOfTiedAndLongWindowsMatchesItsDefinition) {
  // Whole-number closes tie often (equal values share a quantile rank); 300 values take the long-window sort.
  for (const int32_t n : {64, 300}) {
    std::vector<float> values = walk(n, 1, 11u + n);
    for (float& v : values) v = std::round(v / 2.0f);
    for (const int32_t bins : {2, 8, 64}) {
      RenderParams p = encoding(ChartStyle::kMtf, n, n);
      p.mtf_bins = bins;
      EXPECT_LE(worst_error(values, 1, p), 0.5 + 1e-3) << "n " << n << " bins " << bins;
    }
  }
}

TEST(SeriesEncoding, CpuVariantsGiveIdenticalImages) {
  if (cpu_isa_best() != CpuIsa::kAvx2) GTEST_SKIP() << "no AVX2 on this CPU";
  const CpuIsa saved = cpu_isa_active();
  const std::vector<float> values = walk(45, 4, 9);
  for (const ChartStyle style : {ChartStyle::kGasf, ChartStyle::kGadf, ChartStyle::kMtf, ChartStyle::kRp}) {
    // 45 columns: AVX2 rows of 32 then the rest; 70 x 100: resized, rows repeated.
    for (const auto& [width, height] : {std::pair{45, 45}, std::pair{70, 33}, std::pair{70, 100}}) {
      for (const PixelType dtype : {PixelType::kU8, PixelType::kF32}) {
        RenderParams p = encoding(style, width, height);
        p.dtype = dtype;
        cpu_isa_set(CpuIsa::kGeneric);
        const std::vector<double> generic = render_levels(values, 4, p);
        cpu_isa_set(CpuIsa::kAvx2);
        EXPECT_EQ(render_levels(values, 4, p), generic)
            << chart_style_name(style) << " " << width << "x" << height << " " << pixel_type_name(dtype);
      }
    }
  }
  RenderParams binary = encoding(ChartStyle::kRp, 45, 45);
  binary.rp_threshold = 2.0f;
  cpu_isa_set(CpuIsa::kGeneric);
  const std::vector<double> generic = render_levels(values, 4, binary);
  cpu_isa_set(CpuIsa::kAvx2);
  EXPECT_EQ(render_levels(values, 4, binary), generic) << "binary rp";
  cpu_isa_set(saved);
}

TEST(SeriesEncoding, BinaryRecurrencePlotIsExact) {
  const std::vector<float> values = walk(50, 1, 3);
  std::vector<double> distances;
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < values.size(); ++j) distances.push_back(std::abs(double(values[i]) - values[j]));
  }
  std::sort(distances.begin(), distances.end());
  for (const double quantile : {0.1, 0.5, 0.9}) {
    // Halfway between two neighbouring distances: no float rounding can move a pair across it.
    const size_t k = static_cast<size_t>(quantile * distances.size());
    size_t next = k + 1;
    while (distances[next] - distances[k] < 1e-3) ++next;
    RenderParams p = encoding(ChartStyle::kRp, 50, 50);
    p.rp_threshold = static_cast<float>((distances[k] + distances[next]) / 2);
    EXPECT_EQ(worst_error(values, 1, p), 0.0) << "threshold " << p.rp_threshold;
    const std::vector<double> levels = render_levels(values, 1, p);
    const double ones = static_cast<double>(std::count(levels.begin(), levels.end(), 255.0));
    EXPECT_NEAR(ones / levels.size(), static_cast<double>(next) / distances.size(), 1e-9);
  }
}

TEST(SeriesEncoding, TwoPointsByHand) {
  // x = (0, 1): x~ = (-1, 1), phi = (pi, 0): GASF cos(2 pi), cos(pi), cos(pi), cos(0); GADF sin(0) everywhere.
  const std::vector<float> values = {0.0f, 1.0f};
  EXPECT_EQ(test::render_window(values, encoding(ChartStyle::kGasf, 2, 2)), (std::vector<uint8_t>{255, 0, 0, 255}));
  EXPECT_EQ(test::render_window(values, encoding(ChartStyle::kGadf, 2, 2)), (std::vector<uint8_t>{128, 128, 128, 128}));
  EXPECT_EQ(test::render_window(values, encoding(ChartStyle::kRp, 2, 2)), (std::vector<uint8_t>{0, 255, 255, 0}));
  // Two bins split at the median 0.5: 0 -> bin 0, 1 -> bin 1; the one transition 0 -> 1: W = [[0, 1], [0, 0]].
  RenderParams mtf = encoding(ChartStyle::kMtf, 2, 2);
  mtf.mtf_bins = 2;
  EXPECT_EQ(test::render_window(values, mtf), (std::vector<uint8_t>{0, 255, 0, 0}));
}

TEST(SeriesEncoding, ConstantWindowHasTheDocumentedImage) {
  const std::vector<float> flat(10, 42.0f);
  const auto all = [](uint8_t level) { return std::vector<uint8_t>(100, level); };
  EXPECT_EQ(test::render_window(flat, encoding(ChartStyle::kGasf, 10, 10)), all(0));
  EXPECT_EQ(test::render_window(flat, encoding(ChartStyle::kGadf, 10, 10)), all(128));
  EXPECT_EQ(test::render_window(flat, encoding(ChartStyle::kMtf, 10, 10)), all(255));
  EXPECT_EQ(test::render_window(flat, encoding(ChartStyle::kRp, 10, 10)), all(0));
  RenderParams binary = encoding(ChartStyle::kRp, 10, 10);
  binary.rp_threshold = 0.0f;
  EXPECT_EQ(test::render_window(flat, binary), all(255));
}

TEST(SeriesEncoding, InvalidSettingsAreRefused) {
  const std::vector<float> series(20, 1.0f);
  const int64_t start = 0;
  RenderParams p = encoding(ChartStyle::kMtf, 10, 10);
  p.mtf_bins = 1;
  EXPECT_FALSE(render_validate(p, WindowBatch{series.data(), 1, &start, 1, 10}).is_ok());
  p.mtf_bins = 65;
  EXPECT_FALSE(render_validate(p, WindowBatch{series.data(), 1, &start, 1, 10}).is_ok());
  p = encoding(ChartStyle::kGasf, 10, 10);
  p.volume = true;
  EXPECT_FALSE(render_validate(p, WindowBatch{series.data(), 2, &start, 1, 10}).is_ok());
  p = encoding(ChartStyle::kRp, 10, 10);
  p.rp_threshold = std::nanf("");
  EXPECT_FALSE(render_validate(p, WindowBatch{series.data(), 1, &start, 1, 10}).is_ok());
  EXPECT_TRUE(render_validate(encoding(ChartStyle::kGasf, 10, 10), WindowBatch{series.data(), 1, &start, 1, 10}).is_ok());
}

}  // namespace
}  // namespace kiln
