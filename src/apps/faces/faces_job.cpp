// The faces job: images in batches -> decode (worker threads) -> FaceAnalyzer -> exact dedup -> one output row per
// kept face (TensorWriter: .h5 or .npz, committed at the end) and a JSON line per face and per unreadable image.
#include <chrono>
#include <cmath>

#include <nlohmann/json.hpp>

#include "apps/faces/face_dedup.h"
#include "apps/images/image_batches.h"
#include "apps/images/json_lines.h"
#include "core/thread_pool.h"
#include "io/tensor_writer.h"
#include "kiln/apps/faces.h"

namespace kiln {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The arrays of the output, in order; each row of a face is built by face_row().
const std::vector<TensorArraySpec>& output_arrays() {
  static const std::vector<TensorArraySpec> arrays = {
      {"embeddings", {kFaceEmbeddingSize}}, {"image_index", {}}, {"box", {4}}, {"landmarks", {6, 2}},
      {"det_score", {}}, {"quality", {5}}, {"pose", {3}}, {"accepted", {}}};
  return arrays;
}

struct FaceRow {
  float image_index = 0;
  float box[4];
  float landmarks[12];
  float det_score = 0;
  float quality[5];
  float pose[3];
  float accepted = 0;
};

FaceRow face_row(const Face& f, int64_t image_index) {
  FaceRow row{};
  row.image_index = static_cast<float>(image_index);
  std::copy(std::begin(f.detection.box), std::end(f.detection.box), row.box);
  // Faces without landmarks (none today: UltraFace's are refined) would keep zeros.
  for (int k = 0; k < f.detection.landmark_count; ++k) {
    row.landmarks[2 * k] = f.detection.landmarks[k][0];
    row.landmarks[2 * k + 1] = f.detection.landmarks[k][1];
  }
  row.det_score = f.detection.score;
  const QualityMetrics& q = f.quality;
  const double quality[5] = {q.blur, q.brightness, q.contrast, q.sharpness, q.score};
  for (int k = 0; k < 5; ++k) row.quality[k] = static_cast<float>(quality[k]);
  row.pose[0] = f.pose.yaw;
  row.pose[1] = f.pose.pitch;
  row.pose[2] = f.pose.roll;
  row.accepted = f.accepted ? 1.0f : 0.0f;
  return row;
}

nlohmann::json record_json(const FaceRecord& r) {
  nlohmann::json line;
  line["image"] = r.image;
  line["image_index"] = r.image_index;
  if (!r.error.empty()) {
    line["error"] = r.error;
    return line;
  }
  const Face& f = *r.face;
  const float* b = f.detection.box;
  line["bbox"] = {b[0], b[1], b[0] + b[2], b[1] + b[3]};  // the predecessor's x0, y0, x1, y1
  line["det_score"] = f.detection.score;
  nlohmann::json marks = nlohmann::json::array();
  for (int k = 0; k < f.detection.landmark_count; ++k) marks.push_back({f.detection.landmarks[k][0], f.detection.landmarks[k][1]});
  line["landmarks"] = marks;
  line["face_size"] = f.face_size;
  line["scale"] = f.scale;
  line["enhancement_scale"] = f.enhancement_scale;
  line["quality"] = {{"blur", f.quality.blur},         {"brightness", f.quality.brightness},
                     {"contrast", f.quality.contrast}, {"sharpness", f.quality.sharpness},
                     {"overall_score", f.quality.score}};
  line["pose"] = {{"yaw", f.pose.yaw}, {"pitch", f.pose.pitch}, {"roll", f.pose.roll}};
  line["accepted"] = f.accepted;
  line["reasons"] = f.reasons;
  if (r.duplicate_of >= 0) {
    line["duplicate_of"] = r.duplicate_of;
    line["duplicate_cosine"] = r.duplicate_cosine;
  } else {
    line["row"] = r.row;
  }
  return line;
}

std::string settings_json(const FacesJobConfig& config) {
  nlohmann::json settings;
  for (const auto& entry : face_params().entries()) {
    const ParamValue value = entry.get(&config.face);
    std::visit([&](const auto& v) { settings[entry.spec.name] = v; }, value);
  }
  settings["dedup"] = config.dedup;
  return settings.dump();
}

}  // namespace

const ParamTable<FacesJobConfig>& faces_job_params() {
  static const ParamTable<FacesJobConfig> table = [] {
    using C = FacesJobConfig;
    ParamTable<C> t;
    t.add({.name = "output", .help = "Write one row per kept face here (.h5 or .npz)"},
          [](C& c) -> std::string& { return c.output; });
    t.add({.name = "jsonl", .help = "Write one JSON record per face and per unreadable image here"},
          [](C& c) -> std::string& { return c.jsonl; });
    t.add({.name = "dedup",
           .help = "Drop a face whose cosine similarity to a face already kept is at least this (0.7 = the "
                   "predecessor's cache); 0 = keep every face",
           .min = 0, .max = 1},
          [](C& c) -> double& { return c.dedup; });
    t.include(face_params(), [](C& c) -> FaceSettings& { return c.face; });
    file_job_params_add(t);
    return t;
  }();
  return table;
}

Result<FacesJobSummary> faces_job_run(const FacesJobConfig& config, const ImageInputs& inputs,
                                      const std::function<void(const FaceRecord&)>& on_record,
                                      const std::function<void(int64_t, int64_t)>& on_progress, const LogFn& log) {
  if (config.output.empty() && config.jsonl.empty()) return invalid_argument("faces: give -o and/or --jsonl");
  if (!config.output.empty()) {
    KILN_TRY_ASSIGN(const TensorFileFormat format, tensor_file_format_from_path(config.output));
    if (format == TensorFileFormat::kNpy) {
      return invalid_argument("faces: the output holds several arrays: use .h5 or .npz");
    }
  }
  KILN_TRY_ASSIGN(const ImageBatches batches, ImageBatches::make(inputs));
  const auto started = Clock::now();
  KILN_TRY_ASSIGN(std::unique_ptr<FaceAnalyzer> analyzer,
                  FaceAnalyzer::open(config.face, config.exec,
                                     config.stages.value_or(face_stage_modes_all(config.exec.mode)), log));
  ThreadPool decode_pool(config.exec.threads);
  DecodeOptions decode;
  decode.channels = 3;
  decode.max_pixels = config.max_pixels;

  TensorWriter writer;
  if (!config.output.empty()) KILN_TRY(writer.open_arrays(config.output, output_arrays(), PixelType::kF32));
  JsonLines json;
  if (!config.jsonl.empty()) KILN_TRY(json.open(config.jsonl));
  std::unique_ptr<FaceDedup> dedup;
  if (config.dedup > 0) dedup = std::make_unique<FaceDedup>(static_cast<float>(config.dedup));

  FacesJobSummary summary;
  std::vector<std::string> row_paths;
  const int64_t batch_size = std::max<int64_t>(1, config.exec.batch_size);
  for (int64_t first = 0; first < batches.count(); first += batch_size) {
    const int64_t n = std::min(batch_size, batches.count() - first);
    auto t = Clock::now();
    const DecodedBatch batch = batches.take(first, n, decode, &decode_pool);
    summary.decode_seconds += seconds_since(t);
    t = Clock::now();
    std::vector<std::vector<Face>> faces;
    if (batch.images.count() > 0) KILN_TRY(analyzer->analyze(batch.images.view(), &faces));
    summary.analyze_seconds += seconds_since(t);
    t = Clock::now();
    for (int64_t i = 0; i < n; ++i) {
      FaceRecord record;
      record.image = batches.name(first + i);
      record.image_index = first + i;
      const int64_t k = batch.index[static_cast<size_t>(i)];
      ++summary.images;
      if (k < 0) {
        record.error = batch.status[static_cast<size_t>(i)].message();
        ++summary.unreadable;
        json.write(record_json(record));
        if (on_record) on_record(record);
        continue;
      }
      const std::vector<Face>& image_faces = faces[static_cast<size_t>(k)];
      summary.images_with_faces += image_faces.empty() ? 0 : 1;
      for (const Face& face : image_faces) {
        ++summary.faces;
        FaceRecord r = record;
        r.face = &face;
        if (dedup) r.duplicate_of = dedup->check_and_add(face.embedding.data(), &r.duplicate_cosine);
        if (r.duplicate_of >= 0) {
          ++summary.duplicates;
        } else {
          r.row = summary.written++;
          summary.accepted += face.accepted ? 1 : 0;
          if (writer.is_open()) {
            const FaceRow row = face_row(face, record.image_index);
            KILN_TRY(writer.append({face.embedding.data(), &row.image_index, row.box, row.landmarks, &row.det_score,
                                    row.quality, row.pose, &row.accepted},
                                   1));
            row_paths.push_back(record.image);
          }
        }
        json.write(record_json(r));
        if (on_record) on_record(r);
      }
    }
    summary.write_seconds += seconds_since(t);
    if (on_progress) on_progress(first + n, batches.count());
  }
  if (summary.images > 0 && summary.unreadable == summary.images) {
    return io_error("none of the " + std::to_string(summary.images) + " images could be read");
  }
  if (writer.is_open()) {
    TensorAttributes attributes;
    attributes.text = {{"settings", settings_json(config)},
                       {"detector", config.face.detector},
                       {"embedder", config.face.embedder},
                       {"row", "one per kept face; box x, y, w, h and landmarks in the image's pixels"}};
    attributes.numbers = {{"images", {static_cast<double>(summary.images)}},
                          {"duplicates", {static_cast<double>(summary.duplicates)}}};
    KILN_TRY(writer.finish(row_paths, attributes));
  }
  KILN_TRY(json.commit());
  summary.stages = analyzer->report();
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace kiln
