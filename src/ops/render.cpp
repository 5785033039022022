// Render op boundary: names, argument validation shared by every backend, and render calls from window batches.
#include "ops/render.h"
#include "ops/series_encoding.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace kiln {

namespace {

constexpr int32_t kMaxSide = 1 << 15;
constexpr float kMaxLineWidth = 256.0f;
constexpr int32_t kMaxMovingAverages = kMaxMovingAverageLines;

Status params_validate(const RenderParams& params, int32_t seq_len, int32_t channels) {
  if (params.width < 1 || params.height < 1 || params.width > kMaxSide || params.height > kMaxSide) {
    return invalid_argument("image size " + std::to_string(params.width) + "x" + std::to_string(params.height) +
                            " is outside 1..32768");
  }
  if (params.style == ChartStyle::kLine &&
      !(std::isfinite(params.line_width) && params.line_width > 0.0f && params.line_width <= kMaxLineWidth)) {
    return invalid_argument("line width must be in (0, 256] pixels");
  }
  if (params.dtype != PixelType::kU8 && params.dtype != PixelType::kF32) {
    return invalid_argument("render: images are uint8 or float32");
  }
  if (seq_len < 2) return invalid_argument("seq_len must be at least 2");
  if (params.volume_height < 0 || params.volume_gap < 0 || params.moving_averages < 0 ||
      params.moving_averages > kMaxMovingAverages) {
    return invalid_argument("volume height and gap must be >= 0, moving averages 0.." +
                            std::to_string(kMaxMovingAverages));
  }
  if (params.volume && (render_volume_rows(params) < 1 || render_price_rows(params) < 2)) {
    return invalid_argument("a volume panel of " + std::to_string(render_volume_rows(params)) + " rows and a gap of " +
                            std::to_string(params.volume_gap) + " leave " + std::to_string(render_price_rows(params)) +
                            " of " + std::to_string(params.height) + " rows for the prices (needs >= 1 and >= 2)");
  }
  const int32_t layers = render_layer_channels(params);
  channels -= layers;
  if (channels != 1 && channels != 4) {
    return invalid_argument("series must have 1 or 4 (OHLC) price channels" +
                            (layers > 0 ? " before its " + std::to_string(layers) + " volume/moving-average channels"
                                        : std::string()) +
                            ", not " + std::to_string(channels));
  }
  if (chart_style_is_encoding(params.style)) {
    if (params.color) {
      return invalid_argument("the encodings (gasf, gadf, mtf, rp) are one-channel fields; color applies to charts");
    }
    if (layers > 0) return invalid_argument("the encodings (gasf, gadf, mtf, rp) take no volume or moving averages");
    if (params.mtf_bins < 2 || params.mtf_bins > kMaxMtfBins) {
      return invalid_argument("mtf_bins must be in 2.." + std::to_string(kMaxMtfBins));
    }
    if (!std::isfinite(params.rp_threshold)) return invalid_argument("rp_threshold must be finite");
  }
  if (params.color && params.colors.averages.empty()) {
    return invalid_argument("color_averages needs at least one colour");
  }
  if (chart_style_draws_bars(params.style) && channels != 4) {
    return invalid_argument("OHLC bars and candlesticks need Open/High/Low/Close data (use --ohlc input)");
  }
  return Status::ok();
}

// A colour setting of RenderColors, as "#rrggbb" text.
void add_color(ParamTable<RenderParams>& t, const char* name, const char* help, ChartRgb RenderColors::*field) {
  t.add_custom({.name = name, .type = ParamType::kString, .help = help},
               [field](RenderParams& p, const ParamValue& v) {
                 KILN_TRY_ASSIGN(p.colors.*field, rgb_parse(std::get<std::string>(v)));
                 return Status::ok();
               },
               [field](const RenderParams& p) { return ParamValue(rgb_text(p.colors.*field)); });
}

int hex_digit(char c) {
  const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower >= '0' && lower <= '9') return lower - '0';
  if (lower >= 'a' && lower <= 'f') return lower - 'a' + 10;
  return -1;
}

}  // namespace

Result<ChartRgb> rgb_parse(const std::string& text) {
  const std::string hex = !text.empty() && text[0] == '#' ? text.substr(1) : text;
  int digits[6] = {};
  bool valid = hex.size() == 6;
  for (size_t i = 0; valid && i < 6; ++i) {
    digits[i] = hex_digit(hex[i]);
    valid = digits[i] >= 0;
  }
  if (!valid) return invalid_argument("colour '" + text + "': expected #rrggbb (6 hex digits)");
  return ChartRgb{static_cast<uint8_t>(digits[0] * 16 + digits[1]), static_cast<uint8_t>(digits[2] * 16 + digits[3]),
             static_cast<uint8_t>(digits[4] * 16 + digits[5])};
}

std::string rgb_text(ChartRgb color) {
  static const char* kHex = "0123456789abcdef";
  std::string text = "#";
  for (const uint8_t v : {color.r, color.g, color.b}) {
    text += kHex[v >> 4];
    text += kHex[v & 15];
  }
  return text;
}

RenderParams render_plane_params(const RenderParams& p, int32_t c) {
  RenderParams plane = p;
  const RenderColors& colors = p.colors;
  plane.color = false;
  plane.background = colors.background.channel(c);
  plane.ink = colors.line.channel(c);
  plane.ink_bullish = colors.up.channel(c);
  plane.ink_bearish = colors.down.channel(c);
  plane.layer_inks.set = true;
  plane.layer_inks.volume_up = colors.volume_up.channel(c);
  plane.layer_inks.volume_down = colors.volume_down.channel(c);
  const size_t count = std::max<size_t>(colors.averages.size(), 1);
  for (size_t m = 0; m < plane.layer_inks.averages.size(); ++m) {
    plane.layer_inks.averages[m] = colors.averages.empty() ? plane.ink : colors.averages[m % count].channel(c);
  }
  return plane;
}

const ParamTable<RenderParams>& render_params() {
  static const ParamTable<RenderParams> table = [] {
    using P = RenderParams;
    ParamTable<P> t;
    t.add({.name = "width", .help = "Image width in pixels", .min = 1, .max = kMaxSide},
          [](P& p) -> int32_t& { return p.width; });
    t.add({.name = "height", .help = "Image height in pixels", .min = 1, .max = kMaxSide},
          [](P& p) -> int32_t& { return p.height; });
    t.add({.name = "line_width", .help = "Stroke width in pixels (line charts)", .min = 0, .max = kMaxLineWidth},
          [](P& p) -> float& { return p.line_width; });
    t.add_choice({.name = "style", .help = "Chart style"}, [](P& p) -> ChartStyle& { return p.style; },
                 kChartStyleNames, "chart style");
    t.add({.name = "background", .help = "Background level", .min = 0, .max = 255},
          [](P& p) -> uint8_t& { return p.background; });
    t.add_custom({.name = "ink", .type = ParamType::kInt, .help = "Ink level of lines and bars", .min = 0, .max = 255},
                 [](P& p, const ParamValue& v) {
                   p.ink = p.ink_bullish = p.ink_bearish = static_cast<uint8_t>(std::get<int64_t>(v));
                   return Status::ok();
                 },
                 [](const P& p) { return ParamValue(static_cast<int64_t>(p.ink)); });
    t.add({.name = "ink_bullish", .help = "Ink level of OHLC bars that close at or above the open", .min = 0,
           .max = 255},
          [](P& p) -> uint8_t& { return p.ink_bullish; });
    t.add({.name = "ink_bearish", .help = "Ink level of OHLC bars that close below the open", .min = 0, .max = 255},
          [](P& p) -> uint8_t& { return p.ink_bearish; });
    t.add_choice({.name = "dtype", .help = "Pixel type (float32: level / 255)", .choices = {"uint8", "float32"}},
                 [](P& p) -> PixelType& { return p.dtype; }, pixel_type_parse, pixel_type_name);
    t.add({.name = "volume", .help = "Draw the volume as bars in a panel at the bottom"},
          [](P& p) -> bool& { return p.volume; });
    t.add({.name = "volume_height", .help = "Rows of the volume panel", .min = 0, .max = kMaxSide,
           .default_text = "0 = height / 5"},
          [](P& p) -> int32_t& { return p.volume_height; });
    t.add({.name = "volume_gap", .help = "Background rows between the prices and the volume panel", .min = 0,
           .max = kMaxSide},
          [](P& p) -> int32_t& { return p.volume_gap; });
    t.add({.name = "moving_averages",
           .help = "Channels after the volume that hold moving averages, drawn as 1-px lines",
           .min = 0, .max = kMaxMovingAverages},
          [](P& p) -> int32_t& { return p.moving_averages; });
    t.add({.name = "bar_gap", .help = "OHLC bars: a gap after each bar (4 sub-columns a day; false: 3, as JKX)"},
          [](P& p) -> bool& { return p.bar_gap; });
    t.add({.name = "mtf_bins", .help = "Markov transition field (style mtf): quantile bins of each window", .min = 2,
           .max = kMaxMtfBins},
          [](P& p) -> int32_t& { return p.mtf_bins; });
    t.add({.name = "rp_threshold",
           .help = "Recurrence plot (style rp): 255 where |x_i - x_j| <= this (series units), else 0",
           .default_text = "-1 = the distance, scaled to the window's range"},
          [](P& p) -> float& { return p.rp_threshold; });
    t.add({.name = "color",
           .help = "RGB images (H, W, 3) in the color_* colours (the gray background and inks are not used); charts "
                   "only"},
          [](P& p) -> bool& { return p.color; });
    add_color(t, "color_background", "With color: the background (#rrggbb)", &RenderColors::background);
    add_color(t, "color_line", "With color: the line of line charts", &RenderColors::line);
    add_color(t, "color_up", "With color: bars and candles that close at or above the open", &RenderColors::up);
    add_color(t, "color_down", "With color: bars and candles that close below the open", &RenderColors::down);
    add_color(t, "color_volume_up", "With color: volume bars of days that close at or above the open",
              &RenderColors::volume_up);
    add_color(t, "color_volume_down", "With color: volume bars of days that close below the open",
              &RenderColors::volume_down);
    t.add_custom({.name = "color_averages", .type = ParamType::kString,
                  .help = "With color: the moving averages' colours, a comma list (average m takes colour m, "
                          "cycling)"},
                 [](P& p, const ParamValue& v) {
                   const std::string& text = std::get<std::string>(v);
                   std::vector<ChartRgb> colors;
                   size_t begin = 0;
                   while (begin <= text.size()) {
                     const size_t end = std::min(text.find(',', begin), text.size());
                     KILN_TRY_ASSIGN(const ChartRgb color, rgb_parse(text.substr(begin, end - begin)));
                     colors.push_back(color);
                     begin = end + 1;
                   }
                   p.colors.averages = std::move(colors);
                   return Status::ok();
                 },
                 [](const P& p) {
                   std::string text;
                   for (const ChartRgb& color : p.colors.averages) {
                     if (!text.empty()) text += ',';
                     text += rgb_text(color);
                   }
                   return ParamValue(text);
                 });
    return t;
  }();
  return table;
}

Status render_validate(const RenderParams& params, const WindowBatch& windows) {
  if (windows.count < 0) return invalid_argument("negative window count");
  if (windows.count > 0 && (windows.series == nullptr || windows.starts == nullptr)) {
    return invalid_argument("window batch has no data");
  }
  return params_validate(params, windows.seq_len, windows.channels);
}

Status render_validate(const OpCall& call) {
  const auto& params = *static_cast<const RenderParams*>(call.params);
  if (call.out.count != call.in.count) return invalid_argument("render: one output image per window");
  if (call.in.count == 0) {
    return params_validate(params, 2, (chart_style_draws_bars(params.style) ? 4 : 1) + render_layer_channels(params));
  }
  const int32_t seq_len = render_seq_len(call);
  const int32_t channels = render_channels(call);
  KILN_TRY(params_validate(params, seq_len, channels));
  const size_t pixel = pixel_type_size(params.dtype);
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageView& w = call.in[i];
    if (w.type != PixelType::kF32 || w.layout != Layout::kHWC || w.height != 1 || w.width != seq_len ||
        w.channels != channels) {
      return invalid_argument("render: window " + std::to_string(i) + " is not a 1 x " + std::to_string(seq_len) +
                              " float32 view with " + std::to_string(channels) + " channels like the first");
    }
    const ImageView& o = call.out[i];
    const int32_t image_channels = render_image_channels(params);
    if (o.width != params.width || o.height != params.height || o.channels != image_channels ||
        o.type != params.dtype || o.layout != Layout::kHWC ||
        o.row_stride != static_cast<int64_t>(pixel) * image_channels * o.width) {
      return invalid_argument("render: output image " + std::to_string(i) +
                              " does not match the render parameters (packed " + std::to_string(params.width) + "x" +
                              std::to_string(params.height) + "x" + std::to_string(image_channels) + " " +
                              pixel_type_name(params.dtype) + ")");
    }
  }
  return Status::ok();
}

ImageView render_window_view(const float* series, int32_t channels, int64_t start, int32_t seq_len) {
  return image_view_packed(const_cast<float*>(series + start * channels), seq_len, 1, channels, PixelType::kF32);
}

RenderCall::RenderCall(const RenderParams& params, const WindowBatch& windows, const BatchView& out) {
  m_windows.reserve(static_cast<size_t>(std::max<int64_t>(windows.count, 0)));
  for (int64_t i = 0; i < windows.count; ++i) {
    m_windows.push_back(render_window_view(windows.series, windows.channels, windows.starts[i], windows.seq_len));
  }
  m_images.reserve(static_cast<size_t>(std::max<int64_t>(out.count, 0)));
  for (int64_t i = 0; i < out.count; ++i) m_images.push_back(out.image(i));
  m_call.op = OpKind::kRender;
  m_call.params = &params;
  m_call.in = VarShapeBatchView{m_windows.data(), static_cast<int64_t>(m_windows.size()), MemorySpace::kHost};
  m_call.out = VarShapeBatchView{m_images.data(), static_cast<int64_t>(m_images.size()), MemorySpace::kHost};
}

}  // namespace kiln
