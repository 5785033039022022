// The folder-of-images sink shared by PNG and JPEG: one file per image, price_pattern_{i:06d}.{ext}, plus
// index.csv, run.json while running and manifest.json when complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>

#include "apps/render/image_sink.h"

namespace kiln {

// --- folder sink ---

constexpr const char* kImageFilePrefix = "price_pattern_";

// "price_pattern_000042.png" for ordinal 42 and extension "png" (more digits past 999999).
std::string image_file_name(int64_t ordinal, const std::string& extension);

struct ImageFolderFormat {
  OutputFormat format = OutputFormat::kPng;
  std::string extension;  // file extension without the dot: "png", "jpg"
  std::string detail;     // for describe(): "zlib-1", "q95"
  std::function<std::unique_ptr<ImageEncoder>()> encoder_create;
};

// The folder sink behind png_sink_create and jpeg_sink_create. spec.path is the folder.
Result<std::unique_ptr<ImageSink>> image_folder_sink_create(const OutputSpec& spec, ImageFolderFormat format);

}  // namespace kiln
