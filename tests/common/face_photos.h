// The photographs of the face tests: decoded as RGB, seen as OpenCV matrices and back, resized as a photo of another
// size.
#pragma once

#include <opencv2/imgproc.hpp>

#include <string>

#include <gtest/gtest.h>

#include "kiln/codec.h"

namespace kiln::test {

// The photo at `path` as 8-bit RGB; a failed EXPECT and an empty image when it cannot be read.
inline ImageBuffer photo_decode(const std::string& path) {
  auto image = image_decode_file(path, DecodeOptions{.channels = 3});
  EXPECT_TRUE(image.is_ok()) << path << ": " << image.status().message();
  return image.is_ok() ? std::move(image).value() : ImageBuffer{};
}

// An RGB image's pixels as a cv::Mat (no copy).
inline cv::Mat photo_mat(const ImageBuffer& image) {
  return cv::Mat(image.height, image.width, CV_8UC3, const_cast<uint8_t*>(image.pixels.data()));
}

inline ImageBuffer photo_from_mat(const cv::Mat& mat) {
  ImageBuffer image;
  image.width = mat.cols;
  image.height = mat.rows;
  image.channels = 3;
  const cv::Mat packed = mat.isContinuous() ? mat : mat.clone();
  image.pixels.assign(packed.data, packed.data + packed.total() * 3);
  return image;
}

// `image` resized to width x height (OpenCV's area when shrinking, linear when growing), as a photo of that size.
inline ImageBuffer photo_resized(const ImageBuffer& image, int32_t width, int32_t height) {
  cv::Mat out;
  cv::resize(photo_mat(image), out, cv::Size(width, height), 0, 0,
             width < image.width ? cv::INTER_AREA : cv::INTER_LINEAR);
  return photo_from_mat(out);
}

}  // namespace kiln::test
