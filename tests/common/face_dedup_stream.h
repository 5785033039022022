// A long stream of face embeddings grown from a few real ones, for measuring dedup at scale: each new face is a real
// embedding plus noise (cosine about 0.5 to it and about 0.25 to its siblings: another person as far as dedup can
// tell), and `repeat_share` of the faces are an earlier face of the stream again with a little noise (cosine about
// 0.95: a duplicate). Header-only: tests/apps/faces and bench/face_dedup_scale share it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kiln/apps/faces.h"
#include "kiln/codec.h"

namespace kiln::test {

// The embeddings of the faces in the photos at `paths` and in their mirror images, analyzed on the CPU; empty, with
// the reason in *error, when a photo or the models cannot be read.
inline std::vector<float> face_embeddings_of_photos(const std::vector<std::string>& paths, std::string* error) {
  std::vector<ImageBuffer> images;
  for (const std::string& path : paths) {
    auto image = image_decode_file(path, DecodeOptions{.channels = 3});
    if (!image.is_ok()) {
      *error = image.status().message();
      return {};
    }
    ImageBuffer mirror = image.value();
    const int64_t row = mirror.width * 3;
    for (int64_t y = 0; y < mirror.height; ++y) {
      uint8_t* line = mirror.pixels.data() + y * row;
      for (int64_t x = 0; x < mirror.width / 2; ++x) {
        std::swap_ranges(line + x * 3, line + x * 3 + 3, line + (mirror.width - 1 - x) * 3);
      }
    }
    images.push_back(std::move(image).value());
    images.push_back(std::move(mirror));
  }
  ExecSettings exec;
  exec.mode = ExecMode::kCpu;
  auto analyzer = FaceAnalyzer::open(FaceSettings{}, exec);
  if (!analyzer.is_ok()) {
    *error = analyzer.status().message();
    return {};
  }
  std::vector<ImageView> views;
  for (const ImageBuffer& image : images) views.push_back(image.view());
  const VarShapeBatch batch = VarShapeBatch::wrap(views);
  std::vector<std::vector<Face>> faces;
  if (const Status st = (*analyzer)->analyze(batch.view(), &faces); !st.is_ok()) {
    *error = st.message();
    return {};
  }
  std::vector<float> out;
  for (const auto& image_faces : faces) {
    for (const Face& face : image_faces) out.insert(out.end(), face.embedding.begin(), face.embedding.end());
  }
  return out;
}

inline std::vector<float> face_dedup_stream(const std::vector<float>& real, int64_t dims, int64_t count,
                                            double repeat_share, uint32_t seed) {
  const int64_t bases = static_cast<int64_t>(real.size()) / dims;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<double> unit;
  const float new_face_noise = 1.7f / std::sqrt(static_cast<float>(dims));
  const float repeat_noise = 0.33f / std::sqrt(static_cast<float>(dims));
  std::vector<float> out(static_cast<size_t>(count * dims));
  for (int64_t i = 0; i < count; ++i) {
    const bool repeat = i > 0 && unit(rng) < repeat_share;
    const float* from = repeat ? out.data() + static_cast<int64_t>(unit(rng) * static_cast<double>(i)) * dims
                               : real.data() + (i % bases) * dims;
    const float noise = repeat ? repeat_noise : new_face_noise;
    float* row = out.data() + i * dims;
    double norm = 0;
    for (int64_t d = 0; d < dims; ++d) {
      row[d] = from[d] + noise * normal(rng);
      norm += static_cast<double>(row[d]) * row[d];
    }
    const auto scale = static_cast<float>(1.0 / std::sqrt(norm));
    for (int64_t d = 0; d < dims; ++d) row[d] *= scale;
  }
  return out;
}

}  // namespace kiln::test
