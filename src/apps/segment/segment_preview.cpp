#include "apps/segment/segment_preview.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "ops/image_px.h"

namespace kiln {

namespace {

constexpr int32_t kGap = 10;
constexpr int32_t kTitle = 30;
constexpr int32_t kName = 18;
constexpr int32_t kPlotHeight = 130;
// Samples held per frame shown: the picked frames are at most 1 / (2 x this) of the input's length from even spacing.
constexpr int64_t kHeldPerShown = 8;

// The height of an input's band: its name, then (when it ran) its tallest picked frame and the plots.
int32_t band_height(const std::vector<const SegmentPreviewSample*>& picked, bool ran) {
  int32_t tallest = 0;
  for (const SegmentPreviewSample* s : picked) tallest = std::max(tallest, s->thumbnail.height());
  return kName + (ran ? tallest + 4 + kPlotHeight : 0) + kGap;
}

}  // namespace

SegmentPreviewStream::SegmentPreviewStream(int32_t frames) : m_frames(std::max(1, frames)) {}

void SegmentPreviewStream::sample(int64_t index, double time_s, const ImageView& rgb, const uint16_t* probability,
                                  int32_t width, int32_t height) {
  SegmentPreviewSample s;
  s.index = index;
  s.time_s = time_s;
  s.scale = std::min({1.0, static_cast<double>(kSegmentPreviewThumbWidth) / width,
                      static_cast<double>(kSegmentPreviewThumbHeight) / height});
  const int32_t w = std::max(1, static_cast<int32_t>(std::lround(width * s.scale)));
  const int32_t h = std::max(1, static_cast<int32_t>(std::lround(height * s.scale)));
  s.thumbnail = Canvas(w, h);
  s.thumbnail.image(rgb, 0, 0, w, h);
  std::vector<float> overlay(static_cast<size_t>(w) * static_cast<size_t>(h));
  for (int32_t y = 0; y < h; ++y) {  // the nearest input pixel of each thumbnail pixel's centre
    const int32_t fy = std::min(height - 1, static_cast<int32_t>((y + 0.5) / s.scale));
    for (int32_t x = 0; x < w; ++x) {
      const int32_t fx = std::min(width - 1, static_cast<int32_t>((x + 0.5) / s.scale));
      overlay[static_cast<size_t>(y) * w + x] =
          kiln_half_to_float(probability[static_cast<size_t>(fy) * static_cast<size_t>(width) + fx]);
    }
  }
  s.thumbnail.overlay(overlay.data(), 0, 0, w, h, ink::kOverlay, kSegmentPreviewOpacity);
  m_samples.push_back(std::move(s));
  if (static_cast<int64_t>(m_samples.size()) > kHeldPerShown * m_frames) {  // keep every other one, sample half as often
    std::vector<SegmentPreviewSample> kept;
    for (SegmentPreviewSample& held : m_samples) {
      if (held.index % (2 * m_stride) == 0) kept.push_back(std::move(held));
    }
    m_samples = std::move(kept);
    m_stride *= 2;
  }
}

void SegmentPreviewStream::frame(double time_s, double latency_ms, double person_share) {
  m_times.push_back(time_s);
  m_latency_ms.push_back(latency_ms);
  m_share.push_back(person_share);
}

std::vector<const SegmentPreviewSample*> SegmentPreviewStream::picked() const {
  const int64_t n = static_cast<int64_t>(m_samples.size());
  const int64_t count = std::min<int64_t>(m_frames, n);
  std::vector<const SegmentPreviewSample*> picked;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t at = count == 1 ? 0 : (i * (n - 1) + (count - 1) / 2) / (count - 1);
    picked.push_back(&m_samples[static_cast<size_t>(at)]);
  }
  return picked;
}

Result<std::vector<SegmentPreviewRow>> segment_preview_write(const std::string& path,
                                                            const std::vector<SegmentPreviewInput>& inputs,
                                                            int32_t frames) {
  if (inputs.empty()) return invalid_argument("segment preview: no input");
  const int32_t columns = std::max(2, frames);
  const int32_t width = kGap + columns * (kSegmentPreviewThumbWidth + kGap);
  std::vector<std::vector<const SegmentPreviewSample*>> picked_per_input;
  int32_t height = kTitle;
  for (const SegmentPreviewInput& input : inputs) {
    picked_per_input.push_back(input.stream ? input.stream->picked() : std::vector<const SegmentPreviewSample*>{});
    height += band_height(picked_per_input.back(), input.stream != nullptr);
  }
  Canvas canvas(width, height);
  canvas.text(kGap, 19, "kiln segment: frames across each input, the person in colour", ink::kText, 1.2);
  canvas.fill(width - 200, 10, 12, 12, ink::kOverlay);
  canvas.text(width - 184, 20, "person probability", ink::kText);
  std::vector<SegmentPreviewRow> rows;
  int32_t top = kTitle;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const SegmentPreviewInput& input = inputs[k];
    const std::vector<const SegmentPreviewSample*>& picked = picked_per_input[k];
    const int32_t band_top = top;
    top += band_height(picked, input.stream != nullptr);
    const std::string name = std::filesystem::path(input.name).filename().string();
    SegmentPreviewRow row;
    row.thumb_y = band_top + kName;
    if (input.stream == nullptr) {
      canvas.text(kGap, band_top + 12, Canvas::text_fitted(name + ": " + input.note, width - 2 * kGap), ink::kMuted);
      rows.push_back(row);
      continue;
    }
    const SegmentPreviewStream& s = *input.stream;
    canvas.text(kGap, band_top + 12, Canvas::text_fitted(name + ": " + std::to_string(s.times().size()) + " frames",
                                                    width - 2 * kGap, 1, true));
    for (size_t i = 0; i < picked.size(); ++i) {
      const int32_t x = kGap + static_cast<int32_t>(i) * (kSegmentPreviewThumbWidth + kGap);
      const Canvas& thumbnail = picked[i]->thumbnail;
      canvas.image(thumbnail.view(), x, row.thumb_y, thumbnail.width(), thumbnail.height());
      char label[64];
      std::snprintf(label, sizeof(label), "frame %lld, %.2f s", static_cast<long long>(picked[i]->index),
                    picked[i]->time_s);
      canvas.fill(x, row.thumb_y, Canvas::text_width(label) + 8, 15, ink::kBackground);
      canvas.text(x + 4, row.thumb_y + 11, label);
      row.thumb_x.push_back(x);
    }
    const int32_t plot_top = top - kGap - kPlotHeight;
    const int32_t plot_width = (width - 3 * kGap) / 2;
    row.latency = line_plot_draw(canvas, kGap, plot_top, plot_width, kPlotHeight,
                                 {.title = "latency per frame (decoded -> written)", .x_unit = " s", .y_unit = " ms"},
                                 {{"latency", ink::kSeries[0], s.times(), s.latencies_ms()}});
    row.share = line_plot_draw(canvas, 2 * kGap + plot_width, plot_top, plot_width, kPlotHeight,
                               {.title = "person share of the frame", .x_unit = " s", .y_unit = "%", .y_max = 1,
                                .y_scale = 100},
                               {{"person", ink::kSeries[1], s.times(), s.person_shares()}});
    rows.push_back(row);
  }
  KILN_TRY(canvas.write_png(path));
  return rows;
}

}  // namespace kiln
