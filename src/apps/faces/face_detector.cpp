#include "apps/faces/face_detector.h"

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

// Faces smaller than this many model-input pixels are not found reliably (BlazeFace's finest anchors have a stride
// of 8 or 16 input pixels; UltraFace's 8).
constexpr float kSmallestFaceInputPixels = 20.0f;
// auto searches tiles only in photos this large (group photos); smaller ones take one pass.
constexpr int32_t kAutoTileMinSide = 2048;
// The refining pass only places landmarks on a face already found, so a weaker detection there still counts.
constexpr float kRefineMinScore = 0.3f;

// A detection reaching within this share of a tile's side of an edge the image does not share was cut by it.
constexpr float kTileEdgeShare = 0.01f;

// True when `d` (image pixels) reaches an edge of `tile` that lies inside the width x height image.
bool touches_inner_edge(const FaceDetection& d, const RectI& tile, int32_t width, int32_t height) {
  const float m = std::max(1.0f, kTileEdgeShare * static_cast<float>(std::max(tile.width, tile.height)));
  const auto left = static_cast<float>(tile.x), top = static_cast<float>(tile.y);
  const auto right = static_cast<float>(tile.x + tile.width), bottom = static_cast<float>(tile.y + tile.height);
  return (tile.x > 0 && d.box[0] <= left + m) || (tile.y > 0 && d.box[1] <= top + m) ||
         (tile.x + tile.width < width && d.box[0] + d.box[2] >= right - m) ||
         (tile.y + tile.height < height && d.box[1] + d.box[3] >= bottom - m);
}

}  // namespace

Result<std::unique_ptr<FaceDetector>> FaceDetector::open(const FaceSettings& settings, const InferOptions& options,
                                                         OpExecutor& executor) {
  std::string model_name;
  if (settings.detector == "blazeface") {
    model_name = "blazeface-back";
  } else if (settings.detector == "blazeface-front") {
    model_name = "blazeface-front";
  } else if (settings.detector == "ultraface") {
    model_name = "fr-detect";
  } else {
    return invalid_argument("detector '" + settings.detector + "': expected blazeface, blazeface-front or ultraface");
  }
  KILN_TRY_ASSIGN(const PackagedModel model, packaged_model(model_name));
  auto detector = std::unique_ptr<FaceDetector>(new FaceDetector());
  detector->m_settings = settings;
  KILN_TRY_ASSIGN(detector->m_session, InferSession::open(model.file, options));
  detector->m_blazeface = model_name != "fr-detect";
  detector->m_input_width = model.input.width;
  detector->m_input_height = model.input.height;
  detector->m_layout = model_input_layout(model.input);
  detector->m_params = model_preprocess_params(model.input);
  detector->m_params.fit = ResizeFit::kLetterbox;  // square (or 4:3) padding keeps faces' proportions
  std::fill(std::begin(detector->m_params.pad), std::end(detector->m_params.pad), 0.0f);
  detector->m_stager = std::make_unique<InputStager>(*detector->m_session, executor, detector->m_params,
                                                     model.input.width, model.input.height, detector->m_layout);
  if (detector->m_blazeface) detector->m_anchors = blazeface_anchors(model.input.width);
  detector->m_min_face_fraction = kSmallestFaceInputPixels / static_cast<float>(model.input.height);
  if (model_name == "fr-detect") {
    FaceSettings refiner = settings;
    refiner.detector = "blazeface-front";
    refiner.small_faces = "off";
    refiner.min_score = kRefineMinScore;
    KILN_TRY_ASSIGN(detector->m_refiner, FaceDetector::open(refiner, options, executor));
  }
  const size_t outputs = detector->m_session->info().outputs.size();
  if (outputs != (detector->m_blazeface ? 4u : 2u)) {
    return unsupported_format(model.file + ": expected " + (detector->m_blazeface ? "4" : "2") +
                              " outputs for a " + settings.detector + " detector, got " + std::to_string(outputs));
  }
  return detector;
}

std::vector<RectI> FaceDetector::regions(int32_t width, int32_t height, int32_t upscale) const {
  std::vector<RectI> out{{0, 0, width, height}};
  const int32_t side = std::max(width, height);
  // Judged on the photo's own size: an upscaled photo is no bigger a search, and its faces of min_face_size original
  // pixels are upscale times bigger here.
  const bool search = m_settings.small_faces == "on" ||
                      (m_settings.small_faces == "auto" && side / upscale > kAutoTileMinSide);
  if (!search) return out;
  // A tile of side L finds faces down to L * fraction; each level doubles L until the whole image is the level.
  const auto smallest = static_cast<int32_t>(std::ceil(
      static_cast<float>(std::max(1, m_settings.thresholds.min_face_size) * upscale) / m_min_face_fraction));
  std::vector<int32_t> levels;
  for (int32_t level = std::max(smallest, 64); level < side; level *= 2) levels.push_back(level);
  std::reverse(levels.begin(), levels.end());
  for (const int32_t level : levels) {
    // Tiles overlap by half: a face up to half a tile is whole in one of them; bigger ones belong to the next level.
    const int32_t step = level / 2;
    const int32_t tw = std::min(level, width);
    const int32_t th = std::min(level, height);
    for (int32_t y = 0;; y += step) {
      const int32_t ty = std::min(y, height - th);
      for (int32_t x = 0;; x += step) {
        const int32_t tx = std::min(x, width - tw);
        out.push_back({tx, ty, tw, th});
        if (tx + tw >= width) break;
      }
      if (ty + th >= height) break;
    }
  }
  return out;
}

Backend* FaceDetector::device_path() const {
  Backend* const device = m_stager->device_path();
  return m_refiner == nullptr || m_refiner->device_path() == device ? device : nullptr;
}

Status FaceDetector::detect(const VarShapeBatchView& images, int64_t batch,
                            std::vector<std::vector<FaceDetection>>* faces, const std::vector<int32_t>* upscale) {
  std::vector<std::pair<int64_t, RectI>> regions;
  for (int64_t i = 0; i < images.count; ++i) {
    const ImageView& image = images.images[i];
    const int32_t factor = upscale != nullptr ? (*upscale)[static_cast<size_t>(i)] : 1;
    for (const RectI& rect : this->regions(image.width, image.height, factor)) regions.emplace_back(i, rect);
  }
  std::vector<std::vector<FaceDetection>> per_region;
  KILN_TRY(run_regions(images, regions, batch, &per_region));
  std::vector<std::vector<FaceDetection>> found(static_cast<size_t>(images.count));
  for (size_t r = 0; r < regions.size(); ++r) {
    auto& image_faces = found[static_cast<size_t>(regions[r].first)];
    image_faces.insert(image_faces.end(), per_region[r].begin(), per_region[r].end());
  }
  faces->assign(static_cast<size_t>(images.count), {});
  for (int64_t i = 0; i < images.count; ++i) {
    (*faces)[static_cast<size_t>(i)] =
        face_nms(std::move(found[static_cast<size_t>(i)]), m_settings.nms_iou, m_blazeface);
  }
  return m_refiner ? refine(images, batch, faces) : Status::ok();
}

Status FaceDetector::refine(const VarShapeBatchView& images, int64_t batch,
                            std::vector<std::vector<FaceDetection>>* faces) {
  std::vector<std::pair<int64_t, RectI>> crops;
  std::vector<FaceDetection*> owners;
  for (int64_t i = 0; i < images.count; ++i) {
    const ImageView& image = images.images[i];
    for (FaceDetection& face : (*faces)[static_cast<size_t>(i)]) {
      const float side = 2.0f * std::max(face.box[2], face.box[3]);
      const float cx = face.box[0] + face.box[2] / 2;
      const float cy = face.box[1] + face.box[3] / 2;
      const int32_t x0 = std::clamp(static_cast<int32_t>(std::floor(cx - side / 2)), 0, image.width - 1);
      const int32_t y0 = std::clamp(static_cast<int32_t>(std::floor(cy - side / 2)), 0, image.height - 1);
      const int32_t x1 = std::clamp(static_cast<int32_t>(std::ceil(cx + side / 2)), x0 + 1, image.width);
      const int32_t y1 = std::clamp(static_cast<int32_t>(std::ceil(cy + side / 2)), y0 + 1, image.height);
      crops.emplace_back(i, RectI{x0, y0, x1 - x0, y1 - y0});
      owners.push_back(&face);
    }
  }
  std::vector<std::vector<FaceDetection>> refined;
  KILN_TRY(m_refiner->run_regions(images, crops, batch, &refined));
  for (size_t k = 0; k < owners.size(); ++k) {
    const FaceDetection* best = nullptr;
    float best_iou = 0.3f;  // the same face, not a neighbour in the crop
    for (const FaceDetection& candidate : refined[k]) {
      const float iou = face_iou(*owners[k], candidate);
      if (iou > best_iou) {
        best_iou = iou;
        best = &candidate;
      }
    }
    if (best == nullptr) continue;
    owners[k]->landmark_count = best->landmark_count;
    std::copy(&best->landmarks[0][0], &best->landmarks[0][0] + 12, &owners[k]->landmarks[0][0]);
  }
  return Status::ok();
}

Status FaceDetector::run_regions(const VarShapeBatchView& images, const std::vector<std::pair<int64_t, RectI>>& regions,
                                 int64_t batch, std::vector<std::vector<FaceDetection>>* per_region) {
  per_region->assign(regions.size(), {});
  std::vector<HostTensor>& outputs = m_outputs;
  for (size_t first = 0; first < regions.size(); first += static_cast<size_t>(batch)) {
    const size_t n = std::min(regions.size() - first, static_cast<size_t>(batch));
    std::vector<ImageView> in_views;
    for (size_t k = 0; k < n; ++k) {
      const auto& [image, rect] = regions[first + k];
      in_views.push_back(images.images[image].crop(rect.x, rect.y, rect.width, rect.height));
    }
    const VarShapeBatch in_batch = VarShapeBatch::wrap(std::move(in_views), images.space);
    ExecReport report;
    KILN_TRY(m_stager->stage(in_batch.view(), &m_input, &report));
    KILN_TRY(m_stager->run(m_input, &outputs));
    for (size_t k = 0; k < n; ++k) {
      const RectI& rect = regions[first + k].second;
      std::vector<FaceDetection> dets;
      if (m_blazeface) {
        // Outputs: scores (512, 1), (384, 1) and regressors (512, 16), (384, 16), told apart by their last dim.
        std::vector<float> logits;
        std::vector<float> regs;
        for (const HostTensor& t : outputs) {
          const int64_t per = t.elements() / t.shape[0];
          const float* row = t.data() + static_cast<int64_t>(k) * per;
          std::vector<float>& into = t.shape.back() == 1 ? logits : regs;
          into.insert(into.end(), row, row + per);
        }
        if (logits.size() != m_anchors.size() || regs.size() != m_anchors.size() * 16) {
          return unsupported_format("face detector: outputs do not match BlazeFace's 896 anchors");
        }
        dets = blazeface_decode(logits, regs, m_anchors, m_input_width, m_settings.min_score);
      } else {
        const bool scores_first = outputs[0].shape.back() == 2;
        const HostTensor& scores = scores_first ? outputs[0] : outputs[1];
        const HostTensor& boxes = scores_first ? outputs[1] : outputs[0];
        const int64_t ns = scores.elements() / scores.shape[0];
        const int64_t nb = boxes.elements() / boxes.shape[0];
        dets = ultraface_decode({scores.data() + static_cast<int64_t>(k) * ns, static_cast<size_t>(ns)},
                                {boxes.data() + static_cast<int64_t>(k) * nb, static_cast<size_t>(nb)},
                                m_input_width, m_input_height, m_settings.min_score);
      }
      // Model input pixels -> region pixels (undo the letterbox) -> image pixels.
      const LetterboxPlacement place = letterbox_placement(rect.width, rect.height, m_input_width, m_input_height);
      const auto to_x = [&](float x) { return (x - static_cast<float>(place.x)) / place.scale + static_cast<float>(rect.x); };
      const auto to_y = [&](float y) { return (y - static_cast<float>(place.y)) / place.scale + static_cast<float>(rect.y); };
      for (FaceDetection& d : dets) {
        d.box[0] = to_x(d.box[0]);
        d.box[1] = to_y(d.box[1]);
        d.box[2] /= place.scale;
        d.box[3] /= place.scale;
        for (int j = 0; j < d.landmark_count; ++j) {
          d.landmarks[j][0] = to_x(d.landmarks[j][0]);
          d.landmarks[j][1] = to_y(d.landmarks[j][1]);
        }
      }
      // A tile cuts the faces across its inner edges. Tiles overlap by half, and the coarser levels and the whole
      // image take the larger faces, so another region holds each of those whole: the cut one would only pull the
      // whole face's box towards the cut when weighted NMS averages them.
      const ImageView& image = images.images[regions[first + k].first];
      if (rect.width < image.width || rect.height < image.height) {
        std::erase_if(dets, [&](const FaceDetection& d) {
          return touches_inner_edge(d, rect, image.width, image.height);
        });
      }
      (*per_region)[first + k] = std::move(dets);
    }
  }
  return Status::ok();
}

}  // namespace kiln
