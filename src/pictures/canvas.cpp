#include "pictures/canvas.h"

#include <algorithm>
#include <cmath>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "kiln/codec.h"

namespace kiln {

namespace {

constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;
constexpr double kFontScale = 0.4;  // size 1: about 9 pixels from baseline to cap

cv::Scalar scalar(Rgb c) { return {static_cast<double>(c.r), static_cast<double>(c.g), static_cast<double>(c.b)}; }

cv::Mat mat_of(std::vector<uint8_t>& pixels, int32_t width, int32_t height) {
  return cv::Mat(height, width, CV_8UC3, pixels.data());
}

}  // namespace

Canvas::Canvas(int32_t width, int32_t height, Rgb background)
    : m_width(std::max(1, width)), m_height(std::max(1, height)),
      m_pixels(static_cast<size_t>(m_width) * static_cast<size_t>(m_height) * 3) {
  fill(0, 0, m_width, m_height, background);
}

ImageView Canvas::view() const {
  ImageView v;
  v.data = const_cast<uint8_t*>(m_pixels.data());
  v.width = m_width;
  v.height = m_height;
  v.channels = 3;
  v.row_stride = static_cast<int64_t>(m_width) * 3;
  return v;
}

Rgb Canvas::pixel(int32_t x, int32_t y) const {
  const size_t at = (static_cast<size_t>(y) * static_cast<size_t>(m_width) + static_cast<size_t>(x)) * 3;
  return {m_pixels[at], m_pixels[at + 1], m_pixels[at + 2]};
}

void Canvas::fill(int32_t x, int32_t y, int32_t w, int32_t h, Rgb color) {
  cv::Mat canvas = mat_of(m_pixels, m_width, m_height);
  const cv::Rect area = cv::Rect(x, y, w, h) & cv::Rect(0, 0, m_width, m_height);
  if (area.area() > 0) canvas(area).setTo(scalar(color));
}

void Canvas::image(const ImageView& image, int32_t x, int32_t y, int32_t w, int32_t h, bool bgr) {
  if (image.data == nullptr || image.width <= 0 || image.height <= 0 || image.type != PixelType::kU8 ||
      image.layout != Layout::kHWC || w <= 0 || h <= 0) {
    return;
  }
  const int type = image.channels == 1 ? CV_8UC1 : image.channels == 4 ? CV_8UC4 : CV_8UC3;
  const cv::Mat source(image.height, image.width, type, image.data, static_cast<size_t>(image.row_stride));
  cv::Mat rgb;
  if (image.channels == 1) {
    cv::cvtColor(source, rgb, cv::COLOR_GRAY2RGB);
  } else if (image.channels == 4) {
    cv::cvtColor(source, rgb, bgr ? cv::COLOR_BGRA2RGB : cv::COLOR_RGBA2RGB);
  } else if (bgr) {
    cv::cvtColor(source, rgb, cv::COLOR_BGR2RGB);
  } else {
    rgb = source;
  }
  cv::Mat scaled;
  const bool shrinking = w < image.width || h < image.height;
  cv::resize(rgb, scaled, cv::Size(w, h), 0, 0, shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
  cv::Mat canvas = mat_of(m_pixels, m_width, m_height);
  const cv::Rect target = cv::Rect(x, y, w, h) & cv::Rect(0, 0, m_width, m_height);
  if (target.area() <= 0) return;
  scaled(cv::Rect(target.x - x, target.y - y, target.width, target.height)).copyTo(canvas(target));
}

void Canvas::rect(int32_t x, int32_t y, int32_t w, int32_t h, Rgb color, int32_t thickness) {
  for (int32_t t = 0; t < thickness && 2 * t < std::min(w, h); ++t) {
    fill(x + t, y + t, w - 2 * t, 1, color);
    fill(x + t, y + h - 1 - t, w - 2 * t, 1, color);
    fill(x + t, y + t, 1, h - 2 * t, color);
    fill(x + w - 1 - t, y + t, 1, h - 2 * t, color);
  }
}

void Canvas::dot(int32_t x, int32_t y, int32_t radius, Rgb color) {
  cv::Mat canvas = mat_of(m_pixels, m_width, m_height);
  cv::circle(canvas, cv::Point(x, y), radius, scalar(color), cv::FILLED, cv::LINE_8);
}

void Canvas::line(int32_t x0, int32_t y0, int32_t x1, int32_t y1, Rgb color, int32_t thickness, bool smooth) {
  cv::Mat canvas = mat_of(m_pixels, m_width, m_height);
  cv::line(canvas, cv::Point(x0, y0), cv::Point(x1, y1), scalar(color), thickness, smooth ? cv::LINE_AA : cv::LINE_8);
}

void Canvas::overlay(const float* values, int32_t x, int32_t y, int32_t w, int32_t h, Rgb color, float opacity) {
  const uint8_t ink[3] = {color.r, color.g, color.b};
  for (int32_t row = std::max(0, -y); row < h && y + row < m_height; ++row) {
    for (int32_t col = std::max(0, -x); col < w && x + col < m_width; ++col) {
      const float a = std::clamp(values[static_cast<size_t>(row) * static_cast<size_t>(w) + col], 0.0f, 1.0f) * opacity;
      uint8_t* p = &m_pixels[(static_cast<size_t>(y + row) * static_cast<size_t>(m_width) + (x + col)) * 3];
      for (int c = 0; c < 3; ++c) p[c] = static_cast<uint8_t>(std::lround(p[c] + (ink[c] - p[c]) * a));
    }
  }
}

void Canvas::text(int32_t x, int32_t y, const std::string& text, Rgb color, double size) {
  cv::Mat canvas = mat_of(m_pixels, m_width, m_height);
  cv::putText(canvas, text, cv::Point(x, y), kFont, kFontScale * size, scalar(color), 1, cv::LINE_AA);
}

int32_t Canvas::text_width(const std::string& text, double size) {
  int baseline = 0;
  return cv::getTextSize(text, kFont, kFontScale * size, 1, &baseline).width;
}

std::string Canvas::text_fitted(const std::string& text, int32_t width, double size, bool keep_end) {
  if (text_width(text, size) <= width) return text;
  for (size_t drop = 1; drop < text.size(); ++drop) {
    std::string shorter = keep_end ? "..." + text.substr(drop) : text.substr(0, text.size() - drop) + "...";
    if (text_width(shorter, size) <= width) return shorter;
  }
  return "";
}

Status Canvas::write_png(const std::string& path) const {
  EncodeOptions options;
  options.format = ImageFormat::kPng;
  return image_encode_file(view(), path, options);
}

}  // namespace kiln
