#include "render_peers_renderers.h"

#include <cairo.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>

#include "apps/bench/bench_random.h"
#include "kiln/image.h"
#include "kiln/ops/render.h"
#include "ops/cpu/render_cpu.h"

namespace kiln::bench {

namespace {

class KilnRenderer final : public Renderer {
 public:
  KilnRenderer(const Dataset& data, const Config& config, kiln::CpuIsa isa) : m_data(data), m_isa(isa) {
    m_params.style = kiln::ChartStyle::kLine;
    m_params.width = config.width;
    m_params.height = config.height;
    m_params.line_width = config.line_width;
    m_images.resize(kRing, config.width, config.height, 1, kiln::PixelType::kU8);
    m_view = m_images.view();
  }
  void prepare() override { kiln::cpu_isa_set(m_isa); }
  void finish() override { kiln::cpu_isa_set(kiln::cpu_isa_best()); }
  void render(int64_t first) override {
    kiln::WindowBatch windows;
    windows.series = m_data.walk.data();
    windows.starts = m_data.starts.data() + first;
    windows.count = kRing;
    windows.seq_len = kSeqLen;
    const kiln::Status status = kiln::render_cpu(kiln::RenderCall(m_params, windows, m_view).call(), nullptr);
    if (!status.is_ok()) {
      std::fprintf(stderr, "render_peers: kiln: %s\n", status.to_string().c_str());
      std::exit(1);
    }
  }
  const uint8_t* image(int slot) const override { return static_cast<const uint8_t*>(m_view.image(slot).data); }
  int64_t row_stride() const override { return m_params.width; }

 private:
  const Dataset& m_data;
  kiln::CpuIsa m_isa;
  kiln::RenderParams m_params;
  kiln::ImageBatch m_images;
  kiln::BatchView m_view;
};

// cv::polylines with LINE_AA and thickness = line width on a white CV_8UC1 image. Points carry 4 fractional bits
// (shift = 4) so the subpixel positions match the other tools.
class OpencvRenderer final : public Renderer {
 public:
  OpencvRenderer(const Dataset& data, const Config& config)
      : m_data(data), m_config(config), m_pixels(static_cast<size_t>(kRing) * config.width * config.height) {
    for (int i = 0; i < kRing; ++i) {
      m_images[i] = cv::Mat(config.height, config.width, CV_8UC1, m_pixels.data() + i * image_bytes());
    }
    m_points.reserve(kSeqLen);
  }
  void render(int64_t first) override {
    constexpr int kShift = 4;
    constexpr float kScale = 1 << kShift;
    const int thickness = static_cast<int>(std::lround(m_config.line_width));
    for (int i = 0; i < kRing; ++i) {
      cv::Mat& img = m_images[i];
      img.setTo(cv::Scalar(255));
      m_points.clear();
      window_points(m_data.window(first + i), kSeqLen, m_config.width, m_config.height, [&](float x, float y) {
        m_points.emplace_back(static_cast<int>(std::lround(x * kScale)), static_cast<int>(std::lround(y * kScale)));
      });
      cv::polylines(img, m_points, false, cv::Scalar(0), thickness, cv::LINE_AA, kShift);
    }
  }
  const uint8_t* image(int slot) const override { return m_pixels.data() + slot * image_bytes(); }
  int64_t row_stride() const override { return m_config.width; }

 private:
  size_t image_bytes() const { return static_cast<size_t>(m_config.width) * m_config.height; }

  const Dataset& m_data;
  Config m_config;
  std::vector<uint8_t> m_pixels;
  std::array<cv::Mat, kRing> m_images;
  std::vector<cv::Point> m_points;
};

// Cairo on an A8 surface: paint everything opaque, then stroke with the CLEAR operator, so alpha = 255 (1 -
// coverage) is the gray image itself. Round joins and caps, default antialiasing. Cairo's pixel centres sit at
// half-integers, hence the +0.5.
class CairoRenderer final : public Renderer {
 public:
  CairoRenderer(const Dataset& data, const Config& config)
      : m_data(data),
        m_config(config),
        m_stride(cairo_format_stride_for_width(CAIRO_FORMAT_A8, config.width)),
        m_pixels(static_cast<size_t>(kRing) * m_stride * config.height) {
    for (int i = 0; i < kRing; ++i) {
      m_surfaces[i] = cairo_image_surface_create_for_data(m_pixels.data() + i * image_bytes(), CAIRO_FORMAT_A8,
                                                          config.width, config.height, m_stride);
      cairo_t* cr = cairo_create(m_surfaces[i]);
      cairo_set_line_width(cr, config.line_width);
      cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
      cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
      m_contexts[i] = cr;
    }
  }
  ~CairoRenderer() override {
    for (int i = 0; i < kRing; ++i) {
      cairo_destroy(m_contexts[i]);
      cairo_surface_destroy(m_surfaces[i]);
    }
  }
  CairoRenderer(const CairoRenderer&) = delete;
  CairoRenderer& operator=(const CairoRenderer&) = delete;

  void render(int64_t first) override {
    for (int i = 0; i < kRing; ++i) {
      cairo_t* cr = m_contexts[i];
      cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
      cairo_paint(cr);
      cairo_set_operator(cr, CAIRO_OPERATOR_CLEAR);
      bool move = true;
      window_points(m_data.window(first + i), kSeqLen, m_config.width, m_config.height, [&](float x, float y) {
        (move ? cairo_move_to : cairo_line_to)(cr, x + 0.5, y + 0.5);
        move = false;
      });
      cairo_stroke(cr);
      cairo_surface_flush(m_surfaces[i]);
    }
  }
  const uint8_t* image(int slot) const override { return m_pixels.data() + slot * image_bytes(); }
  int64_t row_stride() const override { return m_stride; }

 private:
  size_t image_bytes() const { return static_cast<size_t>(m_stride) * m_config.height; }

  const Dataset& m_data;
  Config m_config;
  int m_stride;
  std::vector<uint8_t> m_pixels;
  std::array<cairo_surface_t*, kRing> m_surfaces{};
  std::array<cairo_t*, kRing> m_contexts{};
};

}  // namespace

Dataset dataset_make(uint64_t seed) {
  Dataset d;
  uint64_t state = seed;
  auto uniform = [&] { return (static_cast<double>(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53; };
  double price = 100.0;
  d.walk.resize(static_cast<size_t>(kWindowCount + kSeqLen - 1));
  for (float& v : d.walk) {
    v = static_cast<float>(price);
    const double step = std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * std::numbers::pi * uniform());
    price += step;
  }
  d.starts.resize(kWindowCount);
  for (int64_t i = 0; i < kWindowCount; ++i) d.starts[static_cast<size_t>(i)] = i;
  return d;
}

std::unique_ptr<Renderer> renderer_kiln(const Dataset& data, const Config& config, CpuIsa isa) {
  return std::make_unique<KilnRenderer>(data, config, isa);
}

std::unique_ptr<Renderer> renderer_opencv(const Dataset& data, const Config& config) {
  return std::make_unique<OpencvRenderer>(data, config);
}

std::unique_ptr<Renderer> renderer_cairo(const Dataset& data, const Config& config) {
  return std::make_unique<CairoRenderer>(data, config);
}

}  // namespace kiln::bench
