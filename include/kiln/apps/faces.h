// The face application: photos -> (upscale, enhance when small) -> detect (BlazeFace or UltraFace, in tiles for big
// group photos) -> align to the ArcFace 112 x 112 template -> 512-D embeddings in batches gathered across images ->
// quality and pose per face and the acceptance rule -> dedup. `kiln faces` runs the job; FaceAnalyzer is the
// per-batch engine the job and the Python module share.
#pragma once

#include <array>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/apps/images.h"
#include "kiln/codec.h"
#include "kiln/exec.h"
#include "kiln/image.h"
#include "kiln/infer.h"
#include "kiln/ops/quality.h"
#include "kiln/params.h"
#include "kiln/scale.h"

namespace kiln {

inline constexpr int32_t kFaceEmbeddingSize = 512;
inline constexpr int32_t kAlignedFaceSize = 112;

// BlazeFace's six points, in its order; UltraFace has none.
enum FaceLandmark : int32_t { kRightEye = 0, kLeftEye, kNoseTip, kMouthCentre, kRightEar, kLeftEar };

struct FaceDetection {
  float box[4] = {0, 0, 0, 0};  // x, y, width, height, in the original image's pixels
  float score = 0;              // detection confidence, 0-1
  int32_t landmark_count = 0;   // 6 (BlazeFace) or 0 (UltraFace)
  float landmarks[6][2] = {};   // x, y in the original image's pixels
};

struct FacePose {
  float yaw = 0;    // degrees, + = the face turned to the image's right
  float pitch = 0;  // degrees, + = looking up
  float roll = 0;   // degrees, + = the eye line rotated clockwise in the image
};

// The acceptance rule, with the predecessor's settings and names.
struct FaceThresholds {
  double min_face_quality = 0.7;    // detection score
  int32_t min_face_size = 30;       // pixels, the box's shorter side in the original image
  double blur_min_variance = 120;   // Laplacian variance of the face region
  double min_sharpness = 100;
  double min_brightness = 30;
  double max_brightness = 225;
  double max_pose_angle = 45;       // degrees, each of yaw, pitch and roll
  double min_overall_quality = 0.7;
};

struct Face {
  FaceDetection detection;
  std::vector<float> embedding;  // kFaceEmbeddingSize values, L2-normalised
  QualityMetrics quality;        // on the face region; quality.score is the overall score
  FacePose pose;
  bool accepted = false;
  std::vector<std::string> reasons;  // why not accepted, e.g. "blur 85.2 < 120"
  float scale = 1;                   // the upscale factor the image was detected at (the predecessor's `scale`)
  float enhancement_scale = 1;       // 1: not enhanced (kept for the predecessor's result shape)
  float face_size = 0;               // the box's shorter side, original pixels
  ImageBuffer aligned;               // the 112 x 112 RGB face the embedder saw (FaceSettings::keep_aligned)
};

struct FaceSettings {
  std::string detector = "blazeface";  // blazeface (back 256) | blazeface-front (128) | ultraface
  float min_score = 0.75f;             // detection score threshold (faces score 0.85-0.92; a coffee cup 0.67)
  float nms_iou = 0.3f;
  // Big photos are also searched in overlapping tiles so that faces of min_face_size pixels are found:
  // auto: when the larger side is over 2048 px; on: always when it would find smaller faces; off: never.
  std::string small_faces = "auto";
  // Small photos: upscaled (the smaller side <= 150 -> 4x, <= 250 -> 3x, <= 600 -> 2x) and enhanced (below 500 x 400:
  // contrast x1.15, sharpness x1.1, unsharp 1/120%/3). auto: only those in which a first pass on the photo as it is
  // found no face, in a second pass; always: before the only pass (the predecessor's order); off.
  std::string upscale = "auto";  // auto | always | off
  std::string enhance = "auto";  // auto | always (every photo) | off
  FaceThresholds thresholds;
  std::string embedder = "fr-embed";
  bool keep_aligned = false;  // fill Face::aligned (for crops)
};

// min_score, nms_iou, detector, small_faces, upscale, enhance, the thresholds by their names.
const ParamTable<FaceSettings>& face_params();
// The settings a faces output records (its "settings" attribute, JSON); other keys are ignored.
Result<FaceSettings> face_settings_from_json(const std::string& json);

// Where each stage may run: the job's mode, refined per stage by the environment (the predecessor's switches).
struct FaceStage {
  ExecMode mode = ExecMode::kAuto;
  std::string why;  // the variable that decided it, e.g. "FACE_DETECTION_GPU=0"; empty: the job's mode
};
struct FaceStageModes {
  FaceStage detection;    // FACE_DETECTION_GPU: the detector, with its letterbox and tile preprocessing
  FaceStage embedding;    // FACE_EMBEDDING_GPU: the alignment warp, its preprocessing and the embedder
  FaceStage enhancement;  // IMAGE_ENHANCEMENT_GPU: upscaling and enhancing small photos
  FaceStage quality;      // QUALITY_CHECKS_GPU: the metrics of each face region
};
// Every stage at `mode`, then GPU_BACKEND=cpu, ALL_GPU and the stage's own switch (it wins over ALL_GPU).
Result<FaceStageModes> face_stage_modes(ExecMode mode, const EnvLookup& lookup);
FaceStageModes face_stage_modes_all(ExecMode mode);

// Where each stage ran, and why.
struct FaceStageReport {
  std::string detection;
  std::string embedding;
  std::string enhancement;
  std::string quality;
  // Where the batches' images were read from: "device (N batches, each uploaded once; aligned there: W runs, quality
  // there: Q runs)" while the detector's model reads device memory (then every stage placed on that device reads
  // them there), else "host"; after a failure on the device, or a batch that did not fit, the reason follows.
  std::string batch_memory;
  int64_t photos = 0;              // photos analysed
  int64_t second_pass_photos = 0;  // of them, those searched again upscaled and enhanced (upscale or enhance auto)
};

// Detect -> align -> embed -> quality for batches of decoded u8 RGB images. Not thread-safe: one per thread.
class FaceAnalyzer {
 public:
  // Every stage at exec.mode, or at `stages`.
  static Result<std::unique_ptr<FaceAnalyzer>> open(const FaceSettings& settings, const ExecSettings& exec,
                                                    LogFn log = {});
  static Result<std::unique_ptr<FaceAnalyzer>> open(const FaceSettings& settings, const ExecSettings& exec,
                                                    const FaceStageModes& stages, LogFn log = {});
  virtual ~FaceAnalyzer() = default;
  // faces[i]: the faces of images[i] (3-channel RGB u8), best detection first.
  virtual Status analyze(const VarShapeBatchView& images, std::vector<std::vector<Face>>* faces) = 0;
  virtual FaceStageReport report() const = 0;
};

// Cosine similarity of two L2-normalised embeddings.
float face_cosine(const float* a, const float* b);

// ---- the job (kiln faces) --------------------------------------------------------------------------------------

// Dedup searches the kept faces exactly until there are this many (about 1 ms per face each), then through an HNSW
// graph (see src/apps/faces/face_dedup.h).
inline constexpr int64_t kFaceDedupExactFaces = 20000;

struct FacesJobConfig {
  FaceSettings face;
  std::string output;  // .h5 (or .npz): one row per kept face (see faces_job_run)
  std::string jsonl;   // one JSON record per face and per unreadable image, in input order
  std::string crops;   // a folder: each kept face's margin crop, 150 x 150 thumbnail and aligned face
  std::string preview;  // a PNG: the first preview_images images with each face's box, landmarks and verdict
  int64_t preview_images = 24;
  double margin = 0.2;  // of the box's width and height, added on each side of a crop
  bool resume = false;  // continue a killed run from its parts ("<output>.parts")
  double dedup = 0;    // > 0: drop a face whose cosine to a kept face is at least this (0.7 = the predecessor's)
  int64_t dedup_exact_faces = kFaceDedupExactFaces;  // kept faces searched exactly before the HNSW graph takes over
  int64_t max_pixels = kImageMaxPixels;
  double decode_timeout = kImageDecodeTimeoutSeconds;  // seconds one image may take to decode (0: no limit)
  ExecSettings exec;   // batch_size: images per batch (faces of a batch are embedded together)
  int32_t lanes = 0;   // batches analysed at once, each on its own analyzer and share of the threads; 0: face_lanes_auto
  std::optional<FaceStageModes> stages;  // none: every stage at exec.mode
  ShardSettings shard;  // a piece of the job: the inputs' piece I of N into {stem}.shard-I-of-N.h5, for kiln merge
};

const ParamTable<FacesJobConfig>& faces_job_params();

struct FaceRecord {
  std::string image;
  int64_t image_index = 0;
  int32_t orientation = 1;  // the EXIF orientation applied to the photo (1: stored upright); boxes are upright
  std::string error;       // an unreadable image: no face, only this
  const Face* face = nullptr;  // valid during the on_record call only
  int64_t duplicate_of = -1;  // the output row of the kept face this one duplicates (then it is not written)
  float duplicate_cosine = 0;
  int64_t row = -1;           // its row in the output
  std::vector<std::string> crop_files;  // margin crop, thumbnail, aligned face (FacesJobConfig::crops)
};

struct FacesJobSummary {
  int64_t images = 0;
  int64_t unreadable = 0;
  int64_t images_with_faces = 0;
  int64_t faces = 0;       // found
  int64_t accepted = 0;    // of those written
  int64_t duplicates = 0;  // dropped by dedup
  int64_t written = 0;
  double seconds = 0;
  double decode_seconds = 0;  // waiting for decoding (it overlaps the analysis of the previous batch)
  double analyze_seconds = 0;
  double write_seconds = 0;
  FaceStageReport stages;
};

// Writes, one row per kept face: embeddings (N, 512), image_index, box (N, 4: x, y, w, h), landmarks (N, 6, 2),
// det_score, quality (N, 5: blur, brightness, contrast, sharpness, overall), pose (N, 3: yaw, pitch, roll),
// accepted (1/0), all float32, plus paths (each face's image) and the settings as attributes. Unreadable images are
// reported (events.record, the JSON lines) and skipped; IoError when none could be read.
Result<FacesJobSummary> faces_job_run(const FacesJobConfig& config, const ImageInputs& inputs,
                                      const std::function<void(const FaceRecord&)>& on_record = {},
                                      const std::function<void(int64_t, int64_t)>& on_progress = {},
                                      const LogFn& log = {});

}  // namespace kiln
