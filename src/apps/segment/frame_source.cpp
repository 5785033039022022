#include "apps/segment/frame_source.h"

#include <glob.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "io/image_inputs.h"
#include "kiln/codec.h"

namespace kiln {

namespace {

class VideoFrameSource final : public FrameSource {
 public:
  explicit VideoFrameSource(std::unique_ptr<VideoReader> reader) : m_reader(std::move(reader)) {}
  const VideoInfo& info() const override { return m_reader->info(); }
  Status read(VideoFrame* frame, bool* end) override { return m_reader->read(frame, end); }
  Status device_frames_end(VideoFrame* frame, const std::string& why) override {
    return m_reader->device_frames_end(frame, why);
  }
  const std::vector<std::string>& errors() const override { return m_reader->errors(); }
  int64_t error_count() const override { return m_reader->error_count(); }
  bool is_video_file() const override { return !video_is_capture_device(m_reader->info().path); }

 private:
  std::unique_ptr<VideoReader> m_reader;
};

// Frames of a sequence must share the first image's size: a different one is an error for that frame.
class ImageSequenceSource final : public FrameSource {
 public:
  static Result<std::unique_ptr<FrameSource>> open(const std::string& input, double fps) {
    std::vector<std::string> files;
    if (std::filesystem::is_directory(input)) {
      KILN_TRY_ASSIGN(files, image_inputs_folder(input));
    } else {
      glob_t g{};
      if (::glob(input.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
      }
      globfree(&g);
      std::sort(files.begin(), files.end());
    }
    if (files.empty()) return invalid_argument(input + ": no images (.jpg, .jpeg, .png) found");
    if (!(fps > 0)) return invalid_argument(input + ": an image sequence needs a frame rate > 0");
    auto source = std::unique_ptr<ImageSequenceSource>(new ImageSequenceSource());
    source->m_files = std::move(files);
    VideoInfo& info = source->m_info;
    info.path = input;
    info.container = "image sequence";
    info.codec = "images";
    // Frame rates like 29.97 become 30000/1001; whole ones n/1. Timestamps count frames at that rate.
    const double rounded = std::round(fps);
    info.frame_rate = std::abs(fps - rounded) < 1e-9 ? Rational{static_cast<int64_t>(rounded), 1}
                                                     : Rational{static_cast<int64_t>(std::lround(fps * 1001)), 1001};
    info.time_base = {info.frame_rate.den, info.frame_rate.num};
    info.frames = static_cast<int64_t>(source->m_files.size());
    info.duration_s = static_cast<double>(info.frames) / fps;
    info.decode = "images (libjpeg-turbo, libspng)";
    // The first readable image sets the size.
    for (const std::string& f : source->m_files) {
      auto img = image_decode_file(f);
      if (img.is_ok()) {
        info.width = img.value().width;
        info.height = img.value().height;
        break;
      }
    }
    if (info.width == 0) return unsupported_format(input + ": none of its images can be decoded");
    return std::unique_ptr<FrameSource>(std::move(source));
  }

  const VideoInfo& info() const override { return m_info; }
  const std::vector<std::string>& errors() const override { return m_errors; }
  int64_t error_count() const override { return m_error_count; }
  bool is_video_file() const override { return false; }
  Status device_frames_end(VideoFrame*, const std::string&) override { return Status::ok(); }

  Status read(VideoFrame* frame, bool* end) override {
    *end = false;
    DecodeOptions decode;
    decode.channels = 3;
    while (m_next < m_files.size()) {
      const size_t k = m_next++;
      auto img = image_decode_file(m_files[k], decode);
      if (!img.is_ok()) {
        note(img.status().message());
        continue;
      }
      if (img.value().width != m_info.width || img.value().height != m_info.height) {
        note(m_files[k] + ": " + std::to_string(img.value().width) + "x" + std::to_string(img.value().height) +
             " differs from the sequence's " + std::to_string(m_info.width) + "x" + std::to_string(m_info.height));
        continue;
      }
      frame->rgb = std::move(img.value());
      frame->pts = static_cast<int64_t>(k);  // time base = one frame: a skipped image leaves a gap in time
      frame->time_s = static_cast<double>(k) * m_info.time_base.value();
      frame->index = m_index++;
      return Status::ok();
    }
    *end = true;
    return Status::ok();
  }

 private:
  ImageSequenceSource() = default;
  void note(std::string text) {
    ++m_error_count;
    if (m_errors.size() < 20) m_errors.push_back(std::move(text));
  }

  VideoInfo m_info;
  std::vector<std::string> m_files;
  size_t m_next = 0;
  int64_t m_index = 0;
  std::vector<std::string> m_errors;
  int64_t m_error_count = 0;
};

}  // namespace

bool frame_source_is_sequence(const std::string& input) {
  return input.find_first_of("*?") != std::string::npos || std::filesystem::is_directory(input);
}

Result<std::unique_ptr<FrameSource>> FrameSource::open(const std::string& input, const VideoReaderOptions& options,
                                                       double sequence_fps) {
  if (frame_source_is_sequence(input)) return ImageSequenceSource::open(input, sequence_fps);
  KILN_TRY_ASSIGN(auto reader, VideoReader::open(input, options));
  return std::unique_ptr<FrameSource>(std::make_unique<VideoFrameSource>(std::move(reader)));
}

}  // namespace kiln
