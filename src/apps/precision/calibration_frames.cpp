#include "apps/precision/calibration_frames.h"

#include <algorithm>
#include <filesystem>

#include "io/image_inputs.h"
#include "kiln/codec.h"
#include "kiln/image_ops.h"
#if KILN_HAS_VIDEO
#include "io/video/video_reader.h"
#endif

namespace kiln {

namespace fs = std::filesystem;

namespace {

std::string number_text(float v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", static_cast<double>(v));
  return buf;
}

// One RGB u8 image -> one batch-1 tensor of the model's input.
Status frame_append(const ImageView& rgb, const CalibrationFeed& feed, std::vector<Tensor>* items) {
  Tensor t;
  t.shape = feed.layout == Layout::kCHW ? std::vector<int64_t>{1, 3, feed.height, feed.width}
                                        : std::vector<int64_t>{1, feed.height, feed.width, 3};
  t.data.resize(static_cast<size_t>(3) * feed.width * feed.height);
  const VarShapeBatch in = VarShapeBatch::wrap(std::vector<ImageView>{rgb});
  const VarShapeBatch out = VarShapeBatch::wrap(std::vector<ImageView>{
      image_view_packed(t.data.data(), feed.width, feed.height, 3, PixelType::kF32, feed.layout)});
  KILN_TRY(preprocess(feed.params, in.view(), out.view()));
  items->push_back(std::move(t));
  return Status::ok();
}

#if KILN_HAS_VIDEO
Status video_frames_load(const std::string& path, const CalibrationFeed& feed, int64_t budget, CalibrationFrames* out) {
  VideoReaderOptions options;
  options.scale_width = feed.width;  // as kiln segment decodes for the model: straight to its input size
  options.scale_height = feed.height;
  options.scale_keep_aspect = feed.params.fit == ResizeFit::kLetterbox;
  KILN_TRY_ASSIGN(std::unique_ptr<VideoReader> reader, VideoReader::open(path, options));
  const int64_t declared = reader->info().frames;
  const int64_t step = declared > budget ? declared / budget : 1;
  VideoFrame frame;
  int64_t taken = 0;
  for (int64_t index = 0; taken < budget; ++index) {
    bool end = false;
    KILN_TRY(reader->read(&frame, &end));
    if (end) break;
    if (index % step != 0) continue;
    KILN_TRY(frame_append(frame.rgb.view(), feed, &out->items));
    ++taken;
  }
  if (taken == 0) return unsupported_format(path + ": no video frame could be decoded");
  return Status::ok();
}
#endif

}  // namespace

Result<CalibrationFeed> calibration_feed_resolve(const std::string& model, const std::string& path,
                                                 const ModelInfo& info) {
  CalibrationFeed feed;
  std::optional<PackagedModel> packaged;
  if (auto named = packaged_model(model); named.is_ok()) {
    packaged = named.value();
  } else if (auto all = packaged_models(); all.is_ok()) {
    std::error_code ec;
    for (const auto& m : all.value()) {
      if (fs::equivalent(m.file, path, ec)) packaged = m;
    }
  }
  if (packaged) {
    const ModelInput& in = packaged->input;
    feed.width = in.width;
    feed.height = in.height;
    feed.layout = model_input_layout(in);
    feed.params = model_preprocess_params(in);
    feed.text = "packaged model " + packaged->name + ": " + (in.bgr ? "BGR" : "RGB") + ", x * " +
                number_text(in.scale) + (in.mean.empty() ? "" : " - mean") + (in.std.empty() ? "" : " / std");
  } else {
    const std::vector<int64_t> s = info.inputs.empty() ? std::vector<int64_t>{} : info.inputs[0].shape;
    if (s.size() != 4 || !((s[1] == 3 && s[2] > 0 && s[3] > 0) || (s[3] == 3 && s[1] > 0 && s[2] > 0))) {
      return invalid_argument(path + ": calibration feeds images, so the model needs an input N x 3 x H x W or "
                              "N x H x W x 3 of a fixed size; its input is " +
                              (info.inputs.empty() ? std::string("missing") : info.inputs[0].shape_text()));
    }
    feed.layout = s[1] == 3 ? Layout::kCHW : Layout::kHWC;
    feed.height = static_cast<int32_t>(feed.layout == Layout::kCHW ? s[2] : s[1]);
    feed.width = static_cast<int32_t>(feed.layout == Layout::kCHW ? s[3] : s[2]);
    feed.params.scale = 1.0f / 255.0f;
    std::fill(std::begin(feed.params.mean), std::end(feed.params.mean), 0.0f);
    std::fill(std::begin(feed.params.std), std::end(feed.params.std), 1.0f);
    feed.text = "RGB, x / 255 (not a packaged model: from its input shape)";
  }
  feed.text = std::to_string(feed.width) + " x " + std::to_string(feed.height) +
              (feed.layout == Layout::kCHW ? " NCHW " : " NHWC ") + feed.text;
  return feed;
}

Result<CalibrationFrames> calibration_frames_load(const std::vector<std::string>& sources, const CalibrationFeed& feed,
                                                  int64_t max_frames) {
  if (max_frames < 1) return invalid_argument("max_frames must be at least 1");
  CalibrationFrames out;
  std::vector<std::string> images;
  std::vector<std::string> videos;
  // Files, folders and @lists as every file command takes them; whatever is not an image is taken as a video.
  KILN_TRY_ASSIGN(const std::vector<std::string> paths, image_inputs_collect(sources));
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return io_error(path + ": no such file or folder (calibration frames)");
    (image_path_is_image(path) ? images : videos).push_back(path);
  }
  if (images.empty() && videos.empty()) return invalid_argument("no calibration frames given");
  // Images first, spread evenly when there are more than the budget; the rest of it goes to the videos.
  const int64_t image_budget = videos.empty() ? max_frames : std::max<int64_t>(1, max_frames / 2);
  const size_t stride = images.size() > static_cast<size_t>(image_budget)
                            ? (images.size() + static_cast<size_t>(image_budget) - 1) / static_cast<size_t>(image_budget)
                            : 1;
  DecodeOptions decode;
  decode.channels = 3;
  std::string first_error;
  for (size_t i = 0; i < images.size(); i += stride) {
    auto image = image_decode_file(images[i], decode);
    if (!image.is_ok()) {
      ++out.skipped;
      if (first_error.empty()) first_error = image.status().message();
      continue;
    }
    KILN_TRY(frame_append(image.value().view(), feed, &out.items));
  }
  if (!images.empty() && out.items.empty()) return unsupported_format("no calibration image could be decoded: " + first_error);
  for (size_t v = 0; v < videos.size(); ++v) {
    const int64_t left = max_frames - static_cast<int64_t>(out.items.size());
    if (left <= 0) break;
#if KILN_HAS_VIDEO
    KILN_TRY(video_frames_load(videos[v], feed, std::max<int64_t>(1, left / static_cast<int64_t>(videos.size() - v)), &out));
#else
    return unsupported_format(videos[v] + ": not an image (.jpg, .png), and this kiln is built without FFmpeg for video");
#endif
  }
  return out;
}

}  // namespace kiln
