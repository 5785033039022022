// kiln merge: the pieces of a sharded job (kiln/scale.h; kiln render/faces/segment --shard I/N) -> one dataset.
// Every piece is checked first (complete, same job and settings, each piece once on its own range, intact); when
// anything is missing or inconsistent nothing is written and every problem is listed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/exec.h"
#include "kiln/params.h"
#include "kiln/status.h"

namespace kiln {

struct MergeConfig {
  std::vector<std::string> inputs;  // folders holding the pieces, or the piece files
  std::string output;               // the dataset (.h5 for render and faces, .json for segment)
  bool copy = false;                // render: one file holding the pieces' compressed chunks (default: a VDS)
  bool overwrite = false;
  double dedup = -1;                // faces: cosine threshold across the pieces (-1: the pieces' own --dedup)
  int64_t dedup_exact_faces = 0;    // faces: kept faces searched exactly before the graph (0: the pieces' own)
};
const ParamTable<MergeConfig>& merge_params();

struct MergeSummary {
  std::string kind;    // "render", "faces", "segment"
  int64_t pieces = 0;
  int64_t items = 0;   // images of a render job, faces, videos
  std::string output;  // what was written
  std::vector<std::string> notes;  // e.g. faces dropped as duplicates across pieces
  double seconds = 0;
};

// problems: filled with one line per problem when the pieces cannot be merged (then the error counts them).
Result<MergeSummary> merge_run(const MergeConfig& config, std::vector<std::string>* problems, const LogFn& log = {});

// The same for pieces already known to be of one kind (merge_run picks by the pieces' contents).
Result<MergeSummary> render_merge(const std::vector<std::string>& pieces, const MergeConfig& config,
                                  std::vector<std::string>* problems);
Result<MergeSummary> faces_merge(const std::vector<std::string>& pieces, const MergeConfig& config,
                                 std::vector<std::string>* problems);
Result<MergeSummary> segment_merge(const std::vector<std::string>& pieces, const MergeConfig& config,
                                   std::vector<std::string>* problems);

}  // namespace kiln
