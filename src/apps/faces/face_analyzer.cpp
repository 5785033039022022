// FaceAnalyzer: the face pipeline on one batch of decoded images. Small photos are upscaled and enhanced on their
// decoded pixels (never re-encoded): by default only those in which a first pass on the photo as it is found no face
// (the detector sees every photo at its own input size, so upscaling changes no face's size to it); every face of the batch is aligned and embedded in shared model batches; quality
// is measured on the original pixels of the face. Where the detector's model reads device memory, the batch goes up
// once (FaceDeviceImages) and each stage placed on that device reads it there; the others read the host's images.
#include <algorithm>
#include <cmath>

#include "apps/faces/face_detector.h"
#include "apps/faces/face_device_images.h"
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
    KILN_TRY_ASSIGN(m_detector, FaceDetector::open(m_settings, options, m_detect_exec));
    options.mode = m_stages.embedding.mode;
    KILN_TRY_ASSIGN(const PackagedModel embedder, packaged_model(m_settings.embedder));
    KILN_TRY_ASSIGN(m_embedder, InferSession::open(embedder.file, options));
    m_embed_params = model_preprocess_params(embedder.input);
    m_embed_layout = model_input_layout(embedder.input);
    if (embedder.input.width != kAlignedFaceSize || embedder.input.height != kAlignedFaceSize) {
      return unsupported_format(embedder.file + ": the embedder must take 112 x 112 aligned faces");
    }
    m_embed_stager = std::make_unique<InputStager>(*m_embedder, m_embed_exec, m_embed_params, kAlignedFaceSize,
                                                   kAlignedFaceSize, m_embed_layout);
    return Status::ok();
  }

  FaceStageReport report() const override {
    FaceStageReport r;
    r.detection = stage_text(m_detector->report(), m_stages.detection) + "; model input: " +
                  m_detector->model_input();
    r.embedding = stage_text(m_embedder->report(), m_stages.embedding) + "; model input: " +
                  m_embed_stager->where(m_embedder->report());
    const bool uploaded = m_device_batches > 0;
    r.batch_memory = uploaded ? "device (" + std::to_string(m_device_batches) +
                                    (m_device_batches == 1 ? " batch" : " batches") +
                                    ", each uploaded once; prepared there: " + std::to_string(m_device_prepared) +
                                    " images, aligned there: " + std::to_string(m_device_warps) +
                                    " runs, quality there: " + std::to_string(m_device_quality) + " runs)"
                              : "host";
    if (!m_device_note.empty()) r.batch_memory += (uploaded ? ", then host (" : " (") + m_device_note + ")";
    r.enhancement = stage_text(m_enhance_report, m_stages.enhancement);
    if (face_prepare_second_pass(m_settings)) {
      r.enhancement += face_second_pass_note(m_second_pass, m_photos);
    }
    r.quality = stage_text(m_quality_report, m_stages.quality);
    r.photos = m_photos;
    r.second_pass_photos = m_second_pass;
    return r;
  }

  Status analyze(const VarShapeBatchView& images, std::vector<std::vector<Face>>* faces) override {
    for (int64_t i = 0; i < images.count; ++i) {
      const ImageView& v = images.images[i];
      if (v.channels != 3 || v.type != PixelType::kU8 || v.layout != Layout::kHWC) {
        return invalid_argument("faces: image " + std::to_string(i) + " is not 3-channel u8 HWC (RGB)");
      }
    }
    m_photos += images.count;
    if (!face_prepare_second_pass(m_settings)) return analyze_pass(images, m_settings, faces);
    KILN_TRY(analyze_pass(images, face_first_pass_settings(m_settings), faces));
    // The small photos in which the first pass found no face: upscaled and enhanced, and searched again.
    std::vector<int64_t> retry;
    std::vector<ImageView> views;
    for (int64_t i = 0; i < images.count; ++i) {
      const ImageView& v = images.images[i];
      if ((*faces)[static_cast<size_t>(i)].empty() && face_prepare_wanted(m_settings, v.width, v.height)) {
        retry.push_back(i);
        views.push_back(v);
      }
    }
    if (retry.empty()) return Status::ok();
    m_second_pass += static_cast<int64_t>(retry.size());
    const VarShapeBatch again = VarShapeBatch::wrap(std::move(views), images.space);
    std::vector<std::vector<Face>> found;
    KILN_TRY(analyze_pass(again.view(), m_settings, &found));
    for (size_t k = 0; k < retry.size(); ++k) (*faces)[static_cast<size_t>(retry[k])] = std::move(found[k]);
    return Status::ok();
  }

 private:
  // One pass of the pipeline over `images`, prepared (upscaled, enhanced) as `settings` say.
  Status analyze_pass(const VarShapeBatchView& images, const FaceSettings& settings,
                      std::vector<std::vector<Face>>* faces) {
    faces->assign(static_cast<size_t>(images.count), {});
    m_pass_settings = settings;
    m_host_prepared = false;
    m_prepared_on_device = false;
    face_prepare_plan(images, settings, &m_prepared, &m_changed, &m_changed_shapes);
    const std::vector<int32_t> factors = m_prepared.factors;
    const DeviceImagesRelease release_after{m_device};
    bool on_device = false;
    KILN_TRY(device_upload(images, &on_device));
    std::vector<std::vector<FaceDetection>> found;
    Status detected = Status(Errc::kNotImplemented, "the images are on the host");
    if (on_device) detected = m_detector->detect(m_device.prepared(), m_exec.batch_size, &found, &factors);
    if (detected.code() == Errc::kNotImplemented) {
      KILN_TRY_ASSIGN(const VarShapeBatchView prepared, host_prepared(images));
      detected = m_detector->detect(prepared, m_exec.batch_size, &found, &factors);
    }
    KILN_TRY(detected);

    // Every face of the batch, aligned on the prepared pixels, then embedded in shared model batches.
    std::vector<std::pair<int64_t, FaceDetection>> all;
    for (int64_t i = 0; i < images.count; ++i) {
      for (const FaceDetection& d : found[static_cast<size_t>(i)]) all.emplace_back(i, d);
    }
    std::vector<float> embeddings;
    std::vector<ImageBuffer> aligned;
    const VarShapeBatchView device_prepared = m_device.prepared();
    KILN_TRY(embed(images, on_device ? &device_prepared : nullptr, all, &embeddings,
                   m_settings.keep_aligned ? &aligned : nullptr));

    std::vector<ImageView> regions, device_regions;
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
      if (on_device) device_regions.push_back(m_device.originals()[i].crop(r.x, r.y, r.width, r.height));
      (*faces)[static_cast<size_t>(i)].push_back(std::move(face));
    }
    if (!regions.empty()) {
      std::vector<QualityMetrics> metrics(regions.size());
      const QualityParams params;
      const VarShapeBatch on_gpu = VarShapeBatch::wrap(std::move(device_regions), MemorySpace::kDevice);
      const OpCall device_call{OpKind::kQuality, &params, on_gpu.view(), {}, metrics.data()};
      Status measured = Status(Errc::kNotImplemented, "regions on the host");
      if (on_device && !m_device_off && face_call_placed_on(m_quality_exec, device_call, m_device.backend())) {
        measured = device_call_checked(m_quality_exec.run(device_call, &m_quality_report), m_stages.quality);
        if (measured.is_ok()) ++m_device_quality;
      }
      if (measured.code() == Errc::kNotImplemented) {
        const VarShapeBatch batch = VarShapeBatch::wrap(std::move(regions));
        measured = m_quality_exec.run(OpCall{OpKind::kQuality, &params, batch.view(), {}, metrics.data()},
                                      &m_quality_report);
      }
      KILN_TRY(measured);
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

  // Gives the batch's device memory back on every way out of analyze().
  struct DeviceImagesRelease {
    FaceDeviceImages& images;
    ~DeviceImagesRelease() { images.reset(); }
  };

  // A device-space call of `stage` that failed: in mode gpu or without fallback_on_error its error stands; otherwise
  // the batch's images are used on the host from now on (NotImplemented: the caller reruns the call there), as the
  // executor moves a failed host batch to the CPU.
  Status device_call_checked(const Status& st, const FaceStage& stage) {
    if (st.is_ok() || !m_exec.fallback_on_error || stage.mode == ExecMode::kGpu) return st;
    if (m_device_note.empty()) m_device_note = "a call on the device failed: " + st.message();
    m_device_off = true;
    return Status(Errc::kNotImplemented, st.message());
  }

  // The batch into the detector's device memory while its model reads there (*uploaded), its small photos prepared
  // there (device_prepare); otherwise it stays on the host: this batch when it does not fit, the rest of the job
  // after another failure (an error instead in mode gpu or without fallback_on_error), with the reason.
  Status device_upload(const VarShapeBatchView& images, bool* uploaded) {
    *uploaded = false;
    m_device.reset();
    Backend* const device = m_device_off ? nullptr : m_detector->device_path();
    if (device == nullptr) {
      if (m_device_batches > 0 && m_device_note.empty()) {
        m_device_note = "the detector's model input moved to the host: " + m_detector->model_input();
      }
      return Status::ok();
    }
    Status st = m_device.upload(*device, images, m_changed_shapes);
    if (st.is_ok()) {
      const Status prepared = device_prepare(images);  // its failures judged there already
      if (prepared.is_ok()) {
        ++m_device_batches;
        *uploaded = true;
        return prepared;
      }
      m_device.reset();
      if (prepared.code() == Errc::kOutOfMemory) {
        if (m_device_note.empty()) m_device_note = "a batch did not fit in device memory: " + prepared.message();
        return Status::ok();
      }
      return prepared.code() == Errc::kNotImplemented ? Status::ok() : prepared;
    }
    m_device.reset();
    if (st.code() == Errc::kOutOfMemory) {
      if (m_device_note.empty()) m_device_note = "a batch did not fit in device memory: " + st.message();
      return Status::ok();
    }
    const Status checked = device_call_checked(st, m_stages.detection);
    return checked.code() == Errc::kNotImplemented ? Status::ok() : checked;
  }

  // The small photos upscaled and enhanced on the device from the uploaded originals where the enhancement stage is
  // placed there; otherwise prepared on the host and uploaded into their room.
  Status device_prepare(const VarShapeBatchView& images) {
    if (m_changed.empty()) return Status::ok();
    std::vector<ImageView> sources;
    for (const int64_t i : m_changed) sources.push_back(m_device.originals()[i]);
    const VarShapeBatch in = VarShapeBatch::wrap(std::move(sources), MemorySpace::kDevice);
    ResizeParams resize;
    resize.interp = Interp::kBicubic;
    const OpCall first_step{OpKind::kResize, &resize, in.view(), m_device.storage(), nullptr};
    if (face_call_placed_on(m_enhance_exec, first_step, m_device.backend())) {
      const Status run = face_prepare_run(m_device.originals(), m_changed, m_prepared.enhanced, m_device.storage(),
                                          m_enhance_exec, &m_enhance_report);
      if (run.code() == Errc::kOutOfMemory) return run;  // this batch stays on the host
      KILN_TRY(device_call_checked(run, m_stages.enhancement));  // NotImplemented: the batch stays on the host
      m_device.prepared_set(m_changed);
      m_prepared_on_device = true;
      m_device_prepared += static_cast<int64_t>(m_changed.size());
      return Status::ok();
    }
    KILN_TRY_ASSIGN(const VarShapeBatchView host, host_prepared(images));
    const Status uploaded = m_device.storage_upload(host, m_changed);
    if (uploaded.code() == Errc::kOutOfMemory) return uploaded;  // this batch stays on the host
    KILN_TRY(device_call_checked(uploaded, m_stages.detection));  // NotImplemented: the batch stays on the host
    m_device.prepared_set(m_changed);
    return Status::ok();
  }

  // The batch as the detector sees it on the host, the first time a stage asks for it: prepared there, or where it
  // was prepared on the device, those images brought down (the pixels the detector saw, enhanced once).
  Result<VarShapeBatchView> host_prepared(const VarShapeBatchView& images) {
    if (m_host_prepared) return m_prepared.prepared.view();
    Status downloaded = Status(Errc::kNotImplemented, "prepared on the host");
    if (m_prepared_on_device) {
      m_prepared.storage = VarShapeBatch::allocate(m_changed_shapes);
      std::vector<ImageView> views(images.images, images.images + images.count);
      downloaded = Status::ok();
      for (size_t k = 0; k < m_changed.size() && downloaded.is_ok(); ++k) {
        const ImageView& from = m_device.storage()[static_cast<int64_t>(k)];
        const ImageView& to = m_prepared.storage[static_cast<int64_t>(k)];
        downloaded = m_device.backend()->device_download(from.data, to.data, from.packed_bytes());
        views[static_cast<size_t>(m_changed[k])] = to;
      }
      m_prepared.prepared = VarShapeBatch::wrap(std::move(views));
      // A device that failed since (the stage asking is a fallback): prepared again on the host where allowed.
      if (!downloaded.is_ok()) {
        const Status checked = device_call_checked(downloaded, m_stages.enhancement);
        if (checked.code() != Errc::kNotImplemented) return checked;
      }
    }
    if (!downloaded.is_ok()) {
      KILN_TRY(face_images_prepare(images, m_pass_settings, m_enhance_exec, &m_prepared, &m_enhance_report));
    }
    m_host_prepared = true;
    return m_prepared.prepared.view();
  }

  // Aligns each face to 112 x 112 (kept in `aligned_faces` unless nullptr) and runs the embedder in batches of
  // batch_size faces; L2-normalises. With `device_images` (the prepared batch on the device) the warp reads them
  // there and the embedder its input there, where the embedding stage is placed on that device; otherwise the warp
  // reads the host's prepared batch (host_prepared of `originals`).
  Status embed(const VarShapeBatchView& originals, const VarShapeBatchView* device_images,
               const std::vector<std::pair<int64_t, FaceDetection>>& all, std::vector<float>* embeddings,
               std::vector<ImageBuffer>* aligned_faces) {
    embeddings->assign(all.size() * kFaceEmbeddingSize, 0.0f);
    const auto chunk = static_cast<size_t>(std::max<int64_t>(1, m_exec.batch_size));
    const size_t face_bytes = size_t{3} * kAlignedFaceSize * kAlignedFaceSize;
    for (size_t first = 0; first < all.size(); first += chunk) {
      const size_t n = std::min(chunk, all.size() - first);
      std::vector<std::array<float, 6>> matrices(n);
      for (size_t k = 0; k < n; ++k) KILN_TRY(face_alignment_matrix(all[first + k].second, matrices[k].data()));
      WarpParams warp;
      warp.matrices = reinterpret_cast<const float(*)[6]>(matrices.data());
      warp.border = BorderMode::kConstant;
      const auto sources_of = [&](const VarShapeBatchView& from) {
        std::vector<ImageView> sources;
        for (size_t k = 0; k < n; ++k) sources.push_back(from[all[first + k].first]);
        return VarShapeBatch::wrap(std::move(sources), from.space);
      };

      VarShapeBatch aligned;
      bool on_device =
          device_images != nullptr && !m_device_off && m_embed_stager->device_path() == m_device.backend();
      if (on_device) {
        if (m_aligned_block.bytes() < n * face_bytes || m_aligned_block.backend() != m_device.backend()) {
          m_aligned_block.reset();
          KILN_TRY_ASSIGN(m_aligned_block, DeviceBlock::acquire(*m_device.backend(), chunk * face_bytes));
        }
        std::vector<ImageView> out;
        for (size_t k = 0; k < n; ++k) {
          out.push_back(image_view_packed(static_cast<uint8_t*>(m_aligned_block.data()) + k * face_bytes,
                                          kAlignedFaceSize, kAlignedFaceSize, 3, PixelType::kU8, Layout::kHWC));
        }
        aligned = VarShapeBatch::wrap(std::move(out), MemorySpace::kDevice);
        const VarShapeBatch in = sources_of(*device_images);
        const OpCall call{OpKind::kWarp, &warp, in.view(), aligned.view(), nullptr};
        on_device = face_call_placed_on(m_embed_exec, call, m_device.backend());
        if (on_device) {
          const Status warped = device_call_checked(m_embed_exec.run(call), m_stages.embedding);
          if (warped.code() == Errc::kNotImplemented) on_device = false;  // rerun on the host's images below
          else KILN_TRY(warped);
          if (on_device) ++m_device_warps;
        }
      }
      if (!on_device) {
        aligned = VarShapeBatch::allocate(std::vector<ImageShape>(
            n, ImageShape{kAlignedFaceSize, kAlignedFaceSize, 3, PixelType::kU8, Layout::kHWC}));
        KILN_TRY_ASSIGN(const VarShapeBatchView host, host_prepared(originals));
        const VarShapeBatch in = sources_of(host);
        KILN_TRY(m_embed_exec.run(OpCall{OpKind::kWarp, &warp, in.view(), aligned.view(), nullptr}));
      }
      if (aligned_faces != nullptr) {
        for (size_t k = 0; k < n; ++k) {
          KILN_TRY_ASSIGN(ImageBuffer face, aligned_fetch(aligned[static_cast<int64_t>(k)], on_device));
          aligned_faces->push_back(std::move(face));
        }
      }
      ExecReport report;
      Status staged = m_embed_stager->stage(aligned.view(), &m_embed_input, &report);
      if (on_device && staged.code() == Errc::kNotImplemented) {  // the embedder's device path closed: from the host
        std::vector<ImageBuffer> faces;
        std::vector<ImageView> views;
        faces.reserve(n);
        for (size_t k = 0; k < n; ++k) {
          KILN_TRY_ASSIGN(ImageBuffer face, aligned_fetch(aligned[static_cast<int64_t>(k)], true));
          faces.push_back(std::move(face));
          views.push_back(faces.back().view());
        }
        const VarShapeBatch host = VarShapeBatch::wrap(std::move(views));
        staged = m_embed_stager->stage(host.view(), &m_embed_input, &report);
      }
      KILN_TRY(staged);
      KILN_TRY(m_embed_stager->run(m_embed_input, &m_embed_outputs));
      if (m_embed_outputs.empty() || m_embed_outputs[0].elements() != static_cast<int64_t>(n) * kFaceEmbeddingSize) {
        return unsupported_format("face embedder: expected " + std::to_string(kFaceEmbeddingSize) +
                                  " values per face");
      }
      for (size_t k = 0; k < n; ++k) {
        const float* src = m_embed_outputs[0].data() + k * kFaceEmbeddingSize;
        float* dst = embeddings->data() + (first + k) * kFaceEmbeddingSize;
        double norm = 0;
        for (int32_t j = 0; j < kFaceEmbeddingSize; ++j) norm += static_cast<double>(src[j]) * src[j];
        const auto inv = static_cast<float>(norm > 0 ? 1.0 / std::sqrt(norm) : 0.0);
        for (int32_t j = 0; j < kFaceEmbeddingSize; ++j) dst[j] = src[j] * inv;
      }
    }
    return Status::ok();
  }

  // An aligned face as the caller keeps it (keep_aligned): copied from the host batch or down from the device.
  Result<ImageBuffer> aligned_fetch(const ImageView& face, bool on_device) const {
    if (!on_device) return image_convert_channels(face, 3);
    ImageBuffer out;
    out.width = face.width;
    out.height = face.height;
    out.channels = 3;
    out.pixels.resize(face.packed_bytes());
    KILN_TRY(m_device.backend()->device_download(face.data, out.pixels.data(), out.pixels.size()));
    return out;
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
  std::unique_ptr<InputStager> m_embed_stager;  // the aligned faces preprocessed where the embedder reads them
  StagedInput m_embed_input;
  std::vector<HostTensor> m_embed_outputs;
  PreprocessParams m_embed_params;
  Layout m_embed_layout = Layout::kCHW;
  FaceSettings m_pass_settings;  // how the current pass prepares its photos
  int64_t m_photos = 0, m_second_pass = 0;  // photos analysed; those searched again, prepared
  PreparedImages m_prepared;  // the current batch's factors and enhancement; its host images once host_prepared ran
  bool m_host_prepared = false;
  bool m_prepared_on_device = false;  // this batch's small photos were prepared in m_device's storage
  std::vector<int64_t> m_changed;  // the images the preparation changes, and their prepared shapes
  std::vector<ImageShape> m_changed_shapes;
  FaceDeviceImages m_device;  // ... and on the device, while the detector's model reads there
  DeviceBlock m_aligned_block;  // the aligned faces on the device (reused)
  int64_t m_device_batches = 0;
  int64_t m_device_warps = 0, m_device_quality = 0;  // runs that read the batch on the device
  int64_t m_device_prepared = 0;                      // small photos prepared there
  bool m_device_off = false;  // after a failure on the device: the host's images for the rest of the job
  std::string m_device_note;  // why batches stay on the host
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
