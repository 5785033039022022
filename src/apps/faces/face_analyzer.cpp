// FaceAnalyzer: the face pipeline on one batch of decoded images. Small photos are upscaled and enhanced on their
// decoded pixels (never re-encoded); every face of the batch is aligned and embedded in shared model batches; quality
// is measured on the original pixels of the face.
#include <algorithm>
#include <cmath>

#include "apps/faces/face_detector.h"
#include "apps/faces/face_geometry.h"
#include "apps/faces/face_prepare.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"

namespace kiln {

namespace {

std::string stage_text(const ExecReport& report, const FaceStage& stage) {
  if (report.backend.empty()) return "not run";
  std::string text = report.backend + " (" + report.placement + (stage.why.empty() ? "" : ", " + stage.why) + ")";
  if (!report.fallback.empty()) text += "; fell back to cpu: " + report.fallback;
  return text;
}

std::string stage_text(const InferReport& report, const FaceStage& stage) {
  std::string text = report.provider + " (" + report.placement + (stage.why.empty() ? "" : ", " + stage.why) + ")";
  for (const std::string& f : report.fallbacks) text += "; " + f;
  return text;
}

ExecOptions stage_options(ExecSettings exec, const FaceStage& stage, ThreadPool* pool) {
  exec.mode = stage.mode;
  return exec_options_make(exec, pool);
}

void judge(const FaceThresholds& t, Face* face) {
  const auto check = [&](bool ok, const std::string& what, double value, const char* op, double limit) {
    if (ok) return;
    char text[160];
    std::snprintf(text, sizeof(text), "%s %.3g %s %.3g", what.c_str(), value, op, limit);
    face->reasons.emplace_back(text);
  };
  const QualityMetrics& q = face->quality;
  check(face->detection.score >= t.min_face_quality, "detection score", face->detection.score, "<", t.min_face_quality);
  check(face->face_size >= static_cast<float>(t.min_face_size), "face size", face->face_size, "<", t.min_face_size);
  check(q.blur >= t.blur_min_variance, "blur", q.blur, "<", t.blur_min_variance);
  check(q.sharpness >= t.min_sharpness, "sharpness", q.sharpness, "<", t.min_sharpness);
  check(q.brightness >= t.min_brightness, "brightness", q.brightness, "<", t.min_brightness);
  check(q.brightness <= t.max_brightness, "brightness", q.brightness, ">", t.max_brightness);
  for (const auto& [name, angle] : {std::pair{"yaw", face->pose.yaw}, {"pitch", face->pose.pitch},
                                    {"roll", face->pose.roll}}) {
    check(std::abs(angle) <= t.max_pose_angle, name, std::abs(angle), ">", t.max_pose_angle);
  }
  check(q.score >= t.min_overall_quality, "overall quality", q.score, "<", t.min_overall_quality);
  face->accepted = face->reasons.empty();
}

class Analyzer final : public FaceAnalyzer {
 public:
  Analyzer(const FaceSettings& settings, const ExecSettings& exec, const FaceStageModes& stages, const LogFn& log)
      : m_settings(settings),
        m_exec(exec),
        m_stages(stages),
        m_pool(exec.threads),
        m_detect_exec(stage_options(exec, stages.detection, &m_pool), log),
        m_embed_exec(stage_options(exec, stages.embedding, &m_pool), log),
        m_enhance_exec(stage_options(exec, stages.enhancement, &m_pool), log),
        m_quality_exec(stage_options(exec, stages.quality, &m_pool), log) {}

  Status open() {
    InferOptions options;
    options.mode = m_stages.detection.mode;
    options.gpu_only = m_exec.gpu_only;
    options.fallback_on_error = m_exec.fallback_on_error;
    options.threads = m_exec.threads;
    options.spin_wait = false;  // the ops of the other stages share the cores
    options.warmup_batch = std::min<int64_t>(m_exec.batch_size, 8);
    KILN_TRY_ASSIGN(m_detector, FaceDetector::open(m_settings, options));
    options.mode = m_stages.embedding.mode;
    KILN_TRY_ASSIGN(const PackagedModel embedder, packaged_model(m_settings.embedder));
    KILN_TRY_ASSIGN(m_embedder, InferSession::open(embedder.file, options));
    m_embed_params = model_preprocess_params(embedder.input);
    m_embed_layout = model_input_layout(embedder.input);
    if (embedder.input.width != kAlignedFaceSize || embedder.input.height != kAlignedFaceSize) {
      return unsupported_format(embedder.file + ": the embedder must take 112 x 112 aligned faces");
    }
    return Status::ok();
  }

  FaceStageReport report() const override {
    FaceStageReport r;
    r.detection = stage_text(m_detector->report(), m_stages.detection);
    r.embedding = stage_text(m_embedder->report(), m_stages.embedding);
    r.enhancement = stage_text(m_enhance_report, m_stages.enhancement);
    r.quality = stage_text(m_quality_report, m_stages.quality);
    return r;
  }

  Status analyze(const VarShapeBatchView& images, std::vector<std::vector<Face>>* faces) override {
    faces->assign(static_cast<size_t>(images.count), {});
    for (int64_t i = 0; i < images.count; ++i) {
      const ImageView& v = images.images[i];
      if (v.channels != 3 || v.type != PixelType::kU8 || v.layout != Layout::kHWC) {
        return invalid_argument("faces: image " + std::to_string(i) + " is not 3-channel u8 HWC (RGB)");
      }
    }
    KILN_TRY(face_images_prepare(images, m_settings, m_enhance_exec, &m_prepared, &m_enhance_report));
    const std::vector<int32_t>& factors = m_prepared.factors;
    const VarShapeBatchView prepared = m_prepared.prepared.view();
    std::vector<std::vector<FaceDetection>> found;
    KILN_TRY(m_detector->detect(prepared, m_detect_exec, m_exec.batch_size, &found, &factors));

    // Every face of the batch, aligned on the prepared pixels, then embedded in shared model batches.
    std::vector<std::pair<int64_t, FaceDetection>> all;
    for (int64_t i = 0; i < images.count; ++i) {
      for (const FaceDetection& d : found[static_cast<size_t>(i)]) all.emplace_back(i, d);
    }
    std::vector<float> embeddings;
    std::vector<ImageBuffer> aligned;
    KILN_TRY(embed(prepared, all, &embeddings, m_settings.keep_aligned ? &aligned : nullptr));

    std::vector<ImageView> regions;
    for (size_t f = 0; f < all.size(); ++f) {
      const auto& [i, prepared_face] = all[f];
      Face face;
      face.detection = prepared_face;
      const auto factor = static_cast<float>(factors[static_cast<size_t>(i)]);
      for (float& v : face.detection.box) v /= factor;
      for (int k = 0; k < face.detection.landmark_count; ++k) {
        face.detection.landmarks[k][0] /= factor;
        face.detection.landmarks[k][1] /= factor;
      }
      face.scale = factor;
      face.enhancement_scale = 1;
      face.face_size = std::min(face.detection.box[2], face.detection.box[3]);
      face.embedding.assign(embeddings.begin() + static_cast<int64_t>(f) * kFaceEmbeddingSize,
                            embeddings.begin() + static_cast<int64_t>(f + 1) * kFaceEmbeddingSize);
      face.pose = face_pose_estimate(face.detection);
      if (!aligned.empty()) face.aligned = std::move(aligned[f]);
      const ImageView& original = images.images[i];
      const RectI r = face_quality_region(face.detection, original.width, original.height);
      regions.push_back(original.crop(r.x, r.y, r.width, r.height));
      (*faces)[static_cast<size_t>(i)].push_back(std::move(face));
    }
    if (!regions.empty()) {
      std::vector<QualityMetrics> metrics(regions.size());
      const VarShapeBatch batch = VarShapeBatch::wrap(std::move(regions));
      const QualityParams params;
      KILN_TRY(m_quality_exec.run(OpCall{OpKind::kQuality, &params, batch.view(), {}, metrics.data()}, &m_quality_report));
      size_t f = 0;
      for (auto& image_faces : *faces) {
        for (Face& face : image_faces) {
          face.quality = metrics[f++];
          judge(m_settings.thresholds, &face);
        }
      }
    }
    return Status::ok();
  }

 private:
  // Aligns each face to 112 x 112 (kept in `aligned` unless nullptr) and runs the embedder in batches of
  // batch_size faces; L2-normalises.
  Status embed(const VarShapeBatchView& images, const std::vector<std::pair<int64_t, FaceDetection>>& all,
               std::vector<float>* embeddings, std::vector<ImageBuffer>* aligned_faces) {
    embeddings->assign(all.size() * kFaceEmbeddingSize, 0.0f);
    const auto chunk = static_cast<size_t>(std::max<int64_t>(1, m_exec.batch_size));
    const int64_t item = int64_t{3} * kAlignedFaceSize * kAlignedFaceSize;
    std::vector<Tensor> outputs;
    std::vector<float> input;
    for (size_t first = 0; first < all.size(); first += chunk) {
      const size_t n = std::min(chunk, all.size() - first);
      std::vector<std::array<float, 6>> matrices(n);
      std::vector<ImageView> sources;
      for (size_t k = 0; k < n; ++k) {
        KILN_TRY(face_alignment_matrix(all[first + k].second, matrices[k].data()));
        sources.push_back(images.images[all[first + k].first]);
      }
      const std::vector<ImageShape> shapes(n, ImageShape{kAlignedFaceSize, kAlignedFaceSize, 3, PixelType::kU8,
                                                         Layout::kHWC});
      VarShapeBatch aligned = VarShapeBatch::allocate(shapes);
      const VarShapeBatch in = VarShapeBatch::wrap(std::move(sources));
      WarpParams warp;
      warp.matrices = reinterpret_cast<const float(*)[6]>(matrices.data());
      warp.border = BorderMode::kConstant;
      KILN_TRY(m_embed_exec.run(OpCall{OpKind::kWarp, &warp, in.view(), aligned.view(), nullptr}));
      if (aligned_faces != nullptr) {
        for (size_t k = 0; k < n; ++k) {
          KILN_TRY_ASSIGN(ImageBuffer copy, image_convert_channels(aligned[static_cast<int64_t>(k)], 3));
          aligned_faces->push_back(std::move(copy));
        }
      }
      input.resize(n * static_cast<size_t>(item));
      std::vector<ImageView> out;
      for (size_t k = 0; k < n; ++k) {
        out.push_back(image_view_packed(input.data() + k * static_cast<size_t>(item), kAlignedFaceSize,
                                        kAlignedFaceSize, 3, PixelType::kF32, m_embed_layout));
      }
      const VarShapeBatch out_batch = VarShapeBatch::wrap(std::move(out));
      KILN_TRY(m_embed_exec.run(OpCall{OpKind::kPreprocess, &m_embed_params, aligned.view(), out_batch.view(), nullptr}));
      const std::vector<int64_t> shape = m_embed_layout == Layout::kCHW
          ? std::vector<int64_t>{static_cast<int64_t>(n), 3, kAlignedFaceSize, kAlignedFaceSize}
          : std::vector<int64_t>{static_cast<int64_t>(n), kAlignedFaceSize, kAlignedFaceSize, 3};
      KILN_TRY(m_embedder->run(input, shape, &outputs));
      if (outputs.empty() || outputs[0].elements() != static_cast<int64_t>(n) * kFaceEmbeddingSize) {
        return unsupported_format("face embedder: expected " + std::to_string(kFaceEmbeddingSize) +
                                  " values per face");
      }
      for (size_t k = 0; k < n; ++k) {
        const float* src = outputs[0].data.data() + k * kFaceEmbeddingSize;
        float* dst = embeddings->data() + (first + k) * kFaceEmbeddingSize;
        double norm = 0;
        for (int32_t j = 0; j < kFaceEmbeddingSize; ++j) norm += static_cast<double>(src[j]) * src[j];
        const auto inv = static_cast<float>(norm > 0 ? 1.0 / std::sqrt(norm) : 0.0);
        for (int32_t j = 0; j < kFaceEmbeddingSize; ++j) dst[j] = src[j] * inv;
      }
    }
    return Status::ok();
  }

  FaceSettings m_settings;
  ExecSettings m_exec;
  FaceStageModes m_stages;
  ThreadPool m_pool;
  OpExecutor m_detect_exec;  // one per stage: each has its own placement
  OpExecutor m_embed_exec;
  OpExecutor m_enhance_exec;
  OpExecutor m_quality_exec;
  std::unique_ptr<FaceDetector> m_detector;
  std::unique_ptr<InferSession> m_embedder;
  PreprocessParams m_embed_params;
  Layout m_embed_layout = Layout::kCHW;
  PreparedImages m_prepared;  // the current batch as the detector and the alignment see it
  ExecReport m_enhance_report;
  ExecReport m_quality_report;
};

}  // namespace

Result<std::unique_ptr<FaceAnalyzer>> FaceAnalyzer::open(const FaceSettings& settings, const ExecSettings& exec,
                                                         LogFn log) {
  return open(settings, exec, face_stage_modes_all(exec.mode), std::move(log));
}

Result<std::unique_ptr<FaceAnalyzer>> FaceAnalyzer::open(const FaceSettings& settings, const ExecSettings& exec,
                                                         const FaceStageModes& stages, LogFn log) {
  auto analyzer = std::make_unique<Analyzer>(settings, exec, stages, log);
  KILN_TRY(analyzer->open());
  return std::unique_ptr<FaceAnalyzer>(std::move(analyzer));
}

float face_cosine(const float* a, const float* b) {
  double dot = 0;
  for (int32_t j = 0; j < kFaceEmbeddingSize; ++j) dot += static_cast<double>(a[j]) * b[j];
  return static_cast<float>(dot);
}

}  // namespace kiln
