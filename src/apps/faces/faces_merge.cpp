// kiln merge for faces: pieces {stem}.shard-I-of-N.h5 (each every face of its images, in input order) -> one output
// equal to a single run's, with the duplicates dropped across all pieces in input order.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "apps/faces/face_dedup.h"
#include "apps/faces/faces_rows.h"
#include "io/durable_file.h"
#include "kiln/apps/merge.h"
#include "kiln/scale.h"

namespace kiln {

namespace {

struct FacesPiece {
  PieceFacts facts;
  FacesFile file;
};

FacesPiece piece_read(const std::string& path) {
  FacesPiece piece;
  piece.facts = piece_facts_from_name(path);
  auto file = faces_file_read(path);
  if (!file.is_ok()) {
    piece.facts.problems.push_back("unreadable (" + file.status().message() + ")");
    return piece;
  }
  piece.file = std::move(file).value();
  const FacesFile& f = piece.file;
  if (f.number_of("shard_count", 0) < 1) {
    piece.facts.problems.push_back("not a piece of a sharded faces job (no shard_count attribute)");
    return piece;
  }
  piece.facts.shard_index = static_cast<int64_t>(f.number_of("shard_index", -1));
  piece.facts.shard_count = static_cast<int64_t>(f.number_of("shard_count", 0));
  piece.facts.first = static_cast<int64_t>(f.number_of("first_image", -1));
  piece.facts.count = static_cast<int64_t>(f.number_of("images", -1));
  piece.facts.total = static_cast<int64_t>(f.number_of("job_images", -1));
  piece.facts.complete = true;  // the file is committed only when its run finished
  const int64_t image_index_column = kFaceEmbeddingSize;
  const int64_t width = faces_row_floats();
  // image_index is stored as float32 (exact below 2^24): compare as the file stores it.
  const float first = static_cast<float>(piece.facts.first);
  const float last = static_cast<float>(piece.facts.first + piece.facts.count - 1);
  for (int64_t r = 0; r < f.count; ++r) {
    const float image = f.rows[static_cast<size_t>(r * width + image_index_column)];
    if (!(image >= first && image <= last)) {
      piece.facts.problems.push_back("face " + std::to_string(r) + " is of image " +
                                     std::to_string(static_cast<int64_t>(image)) +
                                     ", outside the piece's images");
      break;
    }
  }
  return piece;
}

}  // namespace

Result<MergeSummary> faces_merge(const std::vector<std::string>& paths, const MergeConfig& config,
                                 std::vector<std::string>* problems) {
  std::vector<FacesPiece> pieces;
  for (const std::string& path : paths) pieces.push_back(piece_read(path));
  pieces_sort(&pieces);
  const FacesPiece* reference = piece_first_readable(pieces);
  for (FacesPiece& p : pieces) {
    if (!p.facts.problems.empty() || &p == reference) continue;
    if (p.file.text_of("settings") != reference->file.text_of("settings")) {
      p.facts.problems.push_back("made with other settings than " + reference->facts.path);
    } else if (p.file.text_of("job_inputs_crc32") != reference->file.text_of("job_inputs_crc32")) {
      p.facts.problems.push_back("made from another input list than " + reference->facts.path);
    }
  }
  *problems = pieces_check(pieces_facts(pieces));
  if (!problems->empty()) return pieces_refused(pieces.size(), problems->size());

  nlohmann::json settings = nlohmann::json::parse(reference->file.text_of("settings"), nullptr, false);
  if (settings.is_discarded() || !settings.is_object()) return io_error(reference->facts.path + ": bad settings");
  const double threshold = config.dedup >= 0 ? config.dedup : settings.value("dedup", 0.0);
  settings["dedup"] = threshold;
  const int64_t exact_faces = config.dedup_exact_faces > 0
                                  ? config.dedup_exact_faces
                                  : settings.value("dedup_exact_faces", kFaceDedupExactFaces);
  settings["dedup_exact_faces"] = exact_faces;
  FaceSettings face;
  face.detector = reference->file.text_of("detector");
  face.embedder = reference->file.text_of("embedder");

  std::unique_ptr<FaceDedup> dedup;
  if (threshold > 0) dedup = std::make_unique<FaceDedup>(static_cast<float>(threshold), exact_faces);
  const int64_t width = faces_row_floats();
  std::vector<float> kept;
  std::vector<std::string> kept_paths;
  int64_t faces = 0;
  int64_t duplicates = 0;
  for (const FacesPiece& p : pieces) {  // in piece order: the input order
    for (int64_t r = 0; r < p.file.count; ++r) {
      const float* row = p.file.rows.data() + r * width;
      ++faces;
      float cosine = 0;
      if (dedup && dedup->check_and_add(row, &cosine) >= 0) {
        ++duplicates;
        continue;
      }
      kept.insert(kept.end(), row, row + width);
      kept_paths.push_back(p.file.paths[static_cast<size_t>(r)]);
    }
  }
  const int64_t job_images = pieces.front().facts.total;
  KILN_TRY(parent_folder_create(config.output));  // only once the checks passed
  TensorWriter writer;
  KILN_TRY(writer.open_arrays(config.output, faces_output_arrays(), PixelType::kF32));
  KILN_TRY(faces_rows_write(&writer, kept.data(), static_cast<int64_t>(kept_paths.size())));
  KILN_TRY(writer.finish(kept_paths, faces_output_attributes(settings.dump(), face, job_images, duplicates)));

  MergeSummary summary;
  summary.kind = "faces";
  summary.pieces = static_cast<int64_t>(pieces.size());
  summary.items = static_cast<int64_t>(kept_paths.size());
  summary.output = config.output;
  summary.notes.push_back("Faces: " + std::to_string(faces) + " in " + std::to_string(job_images) +
                          " images, " + std::to_string(duplicates) + " dropped as duplicates (cosine >= " +
                          std::to_string(threshold) + ") across the pieces");
  return summary;
}

}  // namespace kiln
