// The frame of kiln segment's tests on the GPU: skipped for want of ONNX Runtime's CUDA provider (failing under
// KILN_REQUIRE_GPU=1), else a folder of the test's own with a video of the astronaut photograph in it (person.mp4).
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/cuda_provider.h"
#include "common/gpu_required.h"
#include "common/photo_video.h"

namespace kiln::test {

class PersonVideoOnCuda : public ::testing::Test {
 protected:
  // `frames` frames of 320 x 240 in a folder named after `tag`; `needs`: what the test needs the provider for.
  PersonVideoOnCuda(std::string tag, int frames, std::string needs)
      : m_tag(std::move(tag)), m_frames(frames), m_needs(std::move(needs)) {}

  void SetUp() override {
    if (!cuda_provider_available()) KILN_GPU_SKIP("no CUDA device with ONNX Runtime's CUDA provider: " << m_needs);
    m_dir = std::filesystem::temp_directory_path() / ("kiln_" + m_tag + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(m_dir);
    m_video = (m_dir / "person.mp4").string();
    photo_video_write(kAstronautPhoto, m_video, kWidth, kHeight, m_frames);
  }
  void TearDown() override {
    if (!m_dir.empty()) std::filesystem::remove_all(m_dir);
  }

  static constexpr int kWidth = 320, kHeight = 240;
  std::string m_tag;
  int m_frames;
  std::string m_needs;
  std::filesystem::path m_dir;
  std::string m_video;
};

}  // namespace kiln::test
