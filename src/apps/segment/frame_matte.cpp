#include "apps/segment/frame_matte.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "core/backend_block.h"
#include "kiln/ops/blur.h"
#include "kiln/ops/resize.h"
#include "ops/blur.h"
#include "ops/matte.h"

namespace kiln {

namespace {

Result<std::vector<uint8_t>> background_make(const std::string& spec, int32_t width, int32_t height) {
  std::vector<uint8_t> bg(static_cast<size_t>(width) * height * 3);
  if (!spec.empty() && spec[0] == '#') {
    unsigned r = 0, g = 0, b = 0;
    if (spec.size() != 7 || std::sscanf(spec.c_str() + 1, "%2x%2x%2x", &r, &g, &b) != 3) {
      return invalid_argument("background: a colour is #rrggbb, not " + spec);
    }
    for (size_t i = 0; i < bg.size(); i += 3) {
      bg[i] = static_cast<uint8_t>(r);
      bg[i + 1] = static_cast<uint8_t>(g);
      bg[i + 2] = static_cast<uint8_t>(b);
    }
    return bg;
  }
  DecodeOptions decode;
  decode.channels = 3;
  KILN_TRY_ASSIGN(const ImageBuffer img, image_decode_file(spec, decode));
  // Cover the frame (scale to fill, centre crop), nearest sample: a backdrop, not a measurement.
  const double scale = std::max(static_cast<double>(width) / img.width, static_cast<double>(height) / img.height);
  const double ox = (img.width - width / scale) / 2, oy = (img.height - height / scale) / 2;
  for (int32_t y = 0; y < height; ++y) {
    const int32_t sy = std::clamp(static_cast<int32_t>(oy + (y + 0.5) / scale), 0, img.height - 1);
    for (int32_t x = 0; x < width; ++x) {
      const int32_t sx = std::clamp(static_cast<int32_t>(ox + (x + 0.5) / scale), 0, img.width - 1);
      const uint8_t* s = &img.pixels[(static_cast<size_t>(sy) * img.width + sx) * 3];
      std::copy(s, s + 3, &bg[(static_cast<size_t>(y) * width + x) * 3]);
    }
  }
  return bg;
}

// Non-zero bytes of a mask row, eight at a time: a byte's high bit after ((b & 0x7f) + 0x7f) | b is set exactly
// when b != 0 (no carry crosses bytes); the eight 0/1 bytes are summed by one multiply (no popcount instruction in
// the baseline ISA).
int64_t nonzero_bytes(const uint8_t* p, int32_t n) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL, kOnes = 0x0101010101010101ULL;
  int64_t count = 0;
  int32_t x = 0;
  for (; x + 8 <= n; x += 8) {
    uint64_t word;
    std::memcpy(&word, p + x, 8);
    const uint64_t flags = ((((word & kLow7) + kLow7) | word) >> 7) & kOnes;
    count += static_cast<int64_t>((flags * kOnes) >> 56);
  }
  for (; x < n; ++x) count += p[x] != 0;
  return count;
}

}  // namespace

MatteRegion matte_region(int32_t frame_width, int32_t frame_height, int32_t input_width, int32_t input_height,
                         int32_t prob_width, int32_t prob_height, bool letterbox) {
  const float sx = static_cast<float>(prob_width) / static_cast<float>(input_width);
  const float sy = static_cast<float>(prob_height) / static_cast<float>(input_height);
  if (!letterbox) return {0, 0, static_cast<float>(prob_width), static_cast<float>(prob_height)};
  const LetterboxPlacement p = letterbox_placement(frame_width, frame_height, input_width, input_height);
  return {static_cast<float>(p.x) * sx, static_cast<float>(p.y) * sy, static_cast<float>(p.width) * sx,
          static_cast<float>(p.height) * sy};
}

Result<FrameMatte> FrameMatte::make(int32_t frame_width, int32_t frame_height, int32_t prob_width,
                                    int32_t prob_height, const MatteRegion& region, SegmentOutput output,
                                    const SegmentSettings& settings, const std::string& background,
                                    int32_t blur_radius) {
  if (frame_width <= 0 || frame_height <= 0 || prob_width <= 0 || prob_height <= 0) {
    return invalid_argument("matte: sizes must be positive");
  }
  FrameMatte m;
  m.m_width = frame_width;
  m.m_height = frame_height;
  m.m_prob_width = prob_width;
  m.m_prob_height = prob_height;
  m.m_output = output;
  m.m_threshold = settings.threshold;
  m.m_params.output = output == SegmentOutput::kMask ? MatteOutput::kMask : MatteOutput::kAlpha;
  m.m_params.threshold = settings.threshold;
  m.m_params.feather = settings.feather;
  m.m_params.region = region;
  m.m_x = matte_taps_make(frame_width, region.x, region.width, prob_width);
  m.m_y = matte_taps_make(frame_height, region.y, region.height, prob_height);
  if (output == SegmentOutput::kComposite) {
    KILN_TRY_ASSIGN(m.m_background, background_make(background, frame_width, frame_height));
  }
  if (output == SegmentOutput::kBlur) {
    if (blur_radius < 1) return invalid_argument("blur_radius must be at least 1");
    m.m_blur = blur_params_for_radius(blur_radius);
  }
  return m;
}

int32_t FrameMatte::channels() const {
  switch (m_output) {
    case SegmentOutput::kMask: return 1;
    case SegmentOutput::kAlpha: return 4;
    default: return 3;
  }
}

// Vertical blend of the two source rows first (prob_width values, vectorized), then one gather per output pixel:
// half the gathers of blending four corners per pixel.
void FrameMatte::column_blend_fill(const float* prob, int32_t y, float* column_blend) const {
  const float wy = m_y.w[y];
  const float* r0 = prob + static_cast<size_t>(m_y.i0[y]) * m_prob_width;
  const float* r1 = prob + static_cast<size_t>(m_y.i1[y]) * m_prob_width;
  for (int32_t i = 0; i < m_prob_width; ++i) column_blend[i] = r0[i] + (r1[i] - r0[i]) * wy;
}

void FrameMatte::prob_row(const float* prob, int32_t y, float* column_blend, float* row) const {
  column_blend_fill(prob, y, column_blend);
  const int32_t* i0 = m_x.i0.data();
  const int32_t* i1 = m_x.i1.data();
  const float* w = m_x.w.data();
  for (int32_t x = 0; x < m_width; ++x) {
    const float a = column_blend[i0[x]];
    row[x] = a + (column_blend[i1[x]] - a) * w[x];
  }
}

double FrameMatte::rows_share(const std::function<void(int64_t, int64_t)>& rows, const std::vector<int64_t>& counts,
                              ThreadPool* pool) const {
  parallel_for(pool, m_height, rows);
  int64_t total = 0;
  for (const int64_t c : counts) total += c;
  return static_cast<double>(total) / (static_cast<double>(m_width) * m_height);
}

Status FrameMatte::matte_make(const ProbabilityMap& map, uint8_t* matte, OpExecutor& exec, ExecReport* report) const {
  const ImageView host_out = image_view_packed(matte, m_width, m_height, 1, PixelType::kU8);
  if (map.device == nullptr) {
    const VarShapeBatch in = VarShapeBatch::wrap({map.view});
    const VarShapeBatch out = VarShapeBatch::wrap({host_out});
    return exec.run(OpCall{OpKind::kMatte, &m_params, in.view(), out.view(), nullptr}, report);
  }
  KILN_TRY_ASSIGN(const DeviceBlock block, DeviceBlock::acquire(*map.device, host_out.packed_bytes()));
  const ImageView device_out = image_view_packed(block.data(), m_width, m_height, 1, PixelType::kU8);
  const OpCall call{OpKind::kMatte, &m_params, VarShapeBatchView{&map.view, 1, MemorySpace::kDevice},
                    VarShapeBatchView{&device_out, 1, MemorySpace::kDevice}, nullptr};
  KILN_TRY(exec.run_on(*map.device, call, report));
  return map.device->device_download(block.data(), matte, host_out.packed_bytes());
}

Result<double> FrameMatte::device_matte(const MatteParams& params, const ProbabilityMap& map,
                                        const ImageView& device_out, OpExecutor& exec, ExecReport* report) const {
  int64_t person = 0;
  const OpCall call{OpKind::kMatte, &params, VarShapeBatchView{&map.view, 1, MemorySpace::kDevice},
                    VarShapeBatchView{&device_out, 1, MemorySpace::kDevice}, &person};
  KILN_TRY(exec.run_on(*map.device, call, report));
  return static_cast<double>(person) / (static_cast<double>(m_width) * m_height);
}

Result<double> FrameMatte::mask_on_device(const ProbabilityMap& map, const ImageView& device_out, uint8_t white,
                                          uint8_t black, OpExecutor& exec, ExecReport* report) const {
  if (m_output != SegmentOutput::kMask || map.device == nullptr) {
    return invalid_argument("mask_on_device: a mask output of a device map");
  }
  MatteParams params = m_params;
  params.foreground = white;
  params.background = black;
  return device_matte(params, map, device_out, exec, report);
}

Result<double> FrameMatte::composite_on_device(const ImageView& frame, const ImageView& background,
                                               const ProbabilityMap& map, const ImageView& device_out,
                                               OpExecutor& exec, ExecReport* report) const {
  if ((m_output != SegmentOutput::kComposite && m_output != SegmentOutput::kBlur) || map.device == nullptr) {
    return invalid_argument("composite_on_device: a composite or blur output of a device map");
  }
  MatteParams params = m_params;
  params.output = MatteOutput::kComposite;
  params.frames = &frame;
  params.backgrounds = &background;
  return device_matte(params, map, device_out, exec, report);
}

Status FrameMatte::blur_on_device(Backend& device, const ImageView& frame, const ImageView& device_out,
                                  OpExecutor& exec) const {
  if (m_output != SegmentOutput::kBlur) return invalid_argument("blur_on_device: a blur output");
  const OpCall call{OpKind::kBlur, &m_blur, VarShapeBatchView{&frame, 1, MemorySpace::kDevice},
                    VarShapeBatchView{&device_out, 1, MemorySpace::kDevice}, nullptr};
  return exec.run_on(device, call);
}

Result<double> FrameMatte::render(const ImageView& frame, const float* prob, ImageBuffer* out, OpExecutor& exec,
                                  ExecReport* report) const {
  return render(frame, ProbabilityMap::on_host(prob, m_prob_width, m_prob_height), out, exec, report);
}

Result<double> FrameMatte::render(const ImageView& frame, const ProbabilityMap& map, ImageBuffer* out,
                                  OpExecutor& exec, ExecReport* report) const {
  const int32_t ch = channels();
  if (m_output != SegmentOutput::kMask &&
      (frame.width != m_width || frame.height != m_height || frame.channels != 3 || frame.type != PixelType::kU8)) {
    return invalid_argument("matte: the frame is not " + std::to_string(m_width) + "x" + std::to_string(m_height) +
                            " RGB");
  }
  out->width = m_width;
  out->height = m_height;
  out->channels = ch;
  out->pixels.resize(static_cast<size_t>(m_width) * m_height * ch);
  // The mask is the output itself; the other outputs blend the frame over a background by an alpha plane.
  std::vector<uint8_t> alpha;
  if (m_output != SegmentOutput::kMask) alpha.resize(static_cast<size_t>(m_width) * m_height);
  uint8_t* const matte = m_output == SegmentOutput::kMask ? out->pixels.data() : alpha.data();
  KILN_TRY(matte_make(map, matte, exec, report));
  ThreadPool* const pool = exec.options().pool;

  // blur: the frame's blur (the blur op's CPU rows), the background the person is blended over, made row by row
  std::optional<BlurRows> blurred;
  if (m_output == SegmentOutput::kBlur) blurred.emplace(frame, m_blur, pool);

  const std::array<float, 256>& units = matte_blend_units();
  std::vector<int64_t> counts(static_cast<size_t>(m_height), 0);
  const auto rows = [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> blurred_row(blurred ? static_cast<size_t>(m_width) * 3 : 0);
    std::optional<BlurRows::Cursor> blur_rows;
    if (blurred) blur_rows.emplace(*blurred);
    for (int64_t yy = begin; yy < end; ++yy) {
      const auto y = static_cast<int32_t>(yy);
      const uint8_t* a = matte + static_cast<size_t>(y) * m_width;
      int64_t count = 0;
      if (m_output == SegmentOutput::kMask) {  // the frame's pixels are not needed (it may be a smaller copy)
        counts[y] = nonzero_bytes(a, m_width);
        continue;
      }
      uint8_t* dst = out->pixels.data() + static_cast<size_t>(y) * m_width * ch;
      const uint8_t* src = frame.row<uint8_t>(y);
      const uint8_t* bg = nullptr;
      if (m_output == SegmentOutput::kComposite) bg = m_background.data() + static_cast<size_t>(y) * m_width * 3;
      if (blur_rows) {
        blur_rows->row(y, blurred_row.data());
        bg = blurred_row.data();
      }
      for (int32_t x = 0; x < m_width; ++x) {
        count += a[x] >= 128;
        if (m_output == SegmentOutput::kAlpha) {
          dst[x * 4] = src[x * 3];
          dst[x * 4 + 1] = src[x * 3 + 1];
          dst[x * 4 + 2] = src[x * 3 + 2];
          dst[x * 4 + 3] = a[x];
        } else {
          const float unit = units[a[x]];
          for (int c = 0; c < 3; ++c) dst[x * 3 + c] = kiln_matte_blend_unit(src[x * 3 + c], bg[x * 3 + c], unit);
        }
      }
      counts[y] = count;
    }
  };
  // Counting a mask's person pixels is one quick pass: not worth waking the pool a second time.
  return rows_share(rows, counts, m_output == SegmentOutput::kMask ? nullptr : pool);
}

double FrameMatte::probabilities(const float* prob, uint16_t* out, ThreadPool* pool) const {
  std::vector<int64_t> counts(static_cast<size_t>(m_height), 0);
  const auto rows = [&](int64_t begin, int64_t end) {
    std::vector<float> p(static_cast<size_t>(m_width)), blend(static_cast<size_t>(m_prob_width));
    for (int64_t yy = begin; yy < end; ++yy) {
      const auto y = static_cast<int32_t>(yy);
      prob_row(prob, y, blend.data(), p.data());
      uint16_t* dst = out + static_cast<size_t>(y) * m_width;
      int64_t count = 0;
      for (int32_t x = 0; x < m_width; ++x) {
        dst[x] = static_cast<uint16_t>(kiln_float_to_half(p[x]));
        count += p[x] >= m_threshold;
      }
      counts[y] = count;
    }
  };
  return rows_share(rows, counts, pool);
}

double FrameMatte::iou(const float* prob, const ImageView& reference) const {
  int64_t both = 0, either = 0;
  std::vector<float> p(static_cast<size_t>(m_width)), blend(static_cast<size_t>(m_prob_width));
  for (int32_t y = 0; y < m_height; ++y) {
    prob_row(prob, y, blend.data(), p.data());
    const uint8_t* ref = reference.row<uint8_t>(y);
    for (int32_t x = 0; x < m_width; ++x) {
      const bool a = p[x] >= m_threshold, b = ref[x * reference.channels] > 127;
      both += a && b;
      either += a || b;
    }
  }
  return either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
}

}  // namespace kiln
