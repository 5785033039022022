// kiln merge: finds the pieces, tells which application wrote them, and hands them to its merge.
#include <chrono>
#include <filesystem>
#include <map>

#include "io/hdf5_handle.h"
#include "kiln/apps/merge.h"
#include "kiln/scale.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

enum class PieceKind { kRender, kFaces, kSegment };

// Faces pieces hold embeddings; chart pieces hold images; segment pieces are JSON records.
Result<PieceKind> piece_kind(const std::string& path) {
  if (fs::path(path).extension() == ".json") return PieceKind::kSegment;
  hdf5::ErrorScope quiet;
  hdf5::Handle file = hdf5::file_handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) return io_error(path + ": cannot open as HDF5 (a piece is .h5, or .json for kiln segment)");
  if (H5Lexists(file.get(), "embeddings", H5P_DEFAULT) > 0) return PieceKind::kFaces;
  if (H5Lexists(file.get(), "images", H5P_DEFAULT) > 0) return PieceKind::kRender;
  return io_error(path + ": neither a chart dataset nor a faces output");
}

// Folders give their piece files; a folder holding the pieces of several jobs is ambiguous.
Status pieces_collect(const std::vector<std::string>& inputs, std::vector<std::string>* files,
                      std::vector<std::string>* problems) {
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::map<std::string, int64_t> jobs;  // stem + extension -> pieces
      for (const PieceName& name : pieces_find(input)) {
        ++jobs[name.stem + name.extension];
        files->push_back(name.path);
      }
      if (jobs.empty()) problems->push_back(input + ": no piece files ({stem}.shard-I-of-N.h5) in this folder");
      if (jobs.size() > 1) {
        std::string list;
        for (const auto& [job, count] : jobs) list += (list.empty() ? "" : ", ") + job + " (" + std::to_string(count) + ")";
        problems->push_back(input + ": holds the pieces of several jobs: " + list + "; name the piece files");
      }
    } else if (fs::exists(input, ec)) {
      files->push_back(input);
    } else {
      problems->push_back(input + ": no such file or folder");
    }
  }
  if (files->empty() && problems->empty()) problems->push_back("no pieces given");
  return Status::ok();
}

Status output_check(const MergeConfig& config) {
  if (config.output.empty()) return invalid_argument("no output given (-o dataset.h5)");
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(config.output, ec));
  if (exists && !config.overwrite) return invalid_argument(config.output + " exists (use --overwrite to replace it)");
  return Status::ok();
}

// The kind of the first piece that can be told; an unreadable one is left to the application's merge to report with
// the others. IoError only when no piece can be told.
Result<PieceKind> pieces_kind(const std::vector<std::string>& files) {
  Status first_error;
  for (const std::string& file : files) {
    auto kind = piece_kind(file);
    if (kind.is_ok()) return kind;
    if (first_error.is_ok()) first_error = kind.status();
  }
  return first_error;
}

}  // namespace

const ParamTable<MergeConfig>& merge_params() {
  static const ParamTable<MergeConfig> table = [] {
    using C = MergeConfig;
    ParamTable<C> t;
    t.add({.name = "output", .help = "The merged dataset (.h5; .json for kiln segment pieces)", .required = true},
          [](C& c) -> std::string& { return c.output; });
    t.add({.name = "copy",
           .help = "Chart pieces: write one file holding their compressed chunks (no recompression) instead of a "
                   "virtual dataset over them"},
          [](C& c) -> bool& { return c.copy; });
    t.add({.name = "overwrite", .help = "Replace an existing output"}, [](C& c) -> bool& { return c.overwrite; });
    t.add({.name = "dedup",
           .help = "Faces pieces: drop a face whose cosine to an earlier kept face (any piece) is at least this; -1: "
                   "the pieces' own --dedup; 0: keep every face",
           .min = -1,
           .max = 1},
          [](C& c) -> double& { return c.dedup; });
    t.add({.name = "dedup_exact_faces",
           .help = "Faces pieces: search the kept faces exactly until there are this many, then through an HNSW graph; "
                   "0: the pieces' own --dedup-exact-faces",
           .min = 0},
          [](C& c) -> int64_t& { return c.dedup_exact_faces; });
    return t;
  }();
  return table;
}

Result<MergeSummary> merge_run(const MergeConfig& config, std::vector<std::string>* problems, const LogFn& log) {
  const auto started = std::chrono::steady_clock::now();
  problems->clear();
  std::vector<std::string> files;
  KILN_TRY(pieces_collect(config.inputs, &files, problems));
  if (!problems->empty()) {
    return invalid_argument("cannot merge: " + std::to_string(problems->size()) +
                            (problems->size() == 1 ? " problem" : " problems") + ", nothing written");
  }
  KILN_TRY(output_check(config));
  KILN_TRY_ASSIGN(const PieceKind kind, pieces_kind(files));
  if (log) log("Merging " + std::to_string(files.size()) + " pieces into " + config.output);
  Result<MergeSummary> summary = invalid_argument("unreachable");
  switch (kind) {
    case PieceKind::kRender:
      summary = render_merge(files, config, problems);
      break;
    case PieceKind::kFaces:
#if KILN_HAS_FACES
      summary = faces_merge(files, config, problems);
#else
      summary = Status(Errc::kNotImplemented, "this build has no kiln faces (faiss or ONNX Runtime missing)");
#endif
      break;
    case PieceKind::kSegment:
#if KILN_HAS_SEGMENT
      summary = segment_merge(files, config, problems);
#else
      summary = Status(Errc::kNotImplemented, "this build has no kiln segment (FFmpeg or ONNX Runtime missing)");
#endif
      break;
  }
  if (summary.is_ok()) {
    summary->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  return summary;
}

}  // namespace kiln
