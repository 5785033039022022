// One job as many independent, deterministic pieces (Slurm job arrays, Kubernetes Indexed Jobs, MPI ranks, Dask
// tasks): piece I of N covers a fixed range of the job's items computed from the input and settings alone, writes
// its own files, and `kiln merge` joins the pieces once every one is there and agrees with the others.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/params.h"
#include "kiln/status.h"

namespace kiln {

// The settings, declared once (CLI --shard / --shard-count, Python shard= / shard_count=).
struct ShardSettings {
  std::string shard = "auto";  // "I/N"; "auto": the scheduler's array index when there is one; "none": the whole job
  int64_t shard_count = 0;     // N where the scheduler gives only the index (Kubernetes' JOB_COMPLETION_INDEX)
};
const ParamTable<ShardSettings>& shard_params();

inline constexpr int64_t kShardCountMax = 1'000'000;

// The piece a run renders: --shard I/N (even 0/1), or a scheduler's index among more than one task.
struct Shard {
  int64_t index = 0;
  int64_t count = 0;   // 0: not a piece (the whole job)
  std::string source;  // how it was chosen: "--shard 2/4", "SLURM_ARRAY_TASK_ID=5 (task 2 of 4)"
  bool is_piece() const { return count > 0; }
  std::string label() const;  // "piece 2 of 4"
};

using ShardEnvLookup = std::function<const char*(const char*)>;

// "I/N" with 0 <= I < N.
Result<Shard> shard_parse(const std::string& text);
// --shard I/N wins; "none" is the whole job; "auto" looks, in this order, for SLURM_ARRAY_TASK_ID (with
// SLURM_ARRAY_TASK_COUNT, or MIN/MAX/STEP; or the id itself with shard_count), JOB_COMPLETION_INDEX (count from
// shard_count), OMPI_COMM_WORLD_RANK/SIZE and PMI_RANK/SIZE. A scheduler's count of 1 is the whole job. A variable
// that is set but malformed or inconsistent is an InvalidArgument naming it.
Result<Shard> shard_resolve(const ShardSettings& settings, const ShardEnvLookup& lookup);

struct IndexRange {
  int64_t first = 0;
  int64_t count = 0;
  int64_t end() const { return first + count; }
};
// Items [total * I / N, total * (I + 1) / N): contiguous, disjoint, covering, sizes differing by at most one.
IndexRange shard_range(int64_t index, int64_t count, int64_t total);

// A piece's file next to the whole job's output: out/btc.h5 -> out/btc.shard-00002-of-00004.h5.
std::string piece_path(const std::string& output, const Shard& shard);

struct PieceName {
  std::string path;
  std::string stem;  // the whole job's output stem ("btc")
  std::string extension;  // ".h5"
  int64_t index = 0;
  int64_t count = 0;
};
// Parses a piece file's name; false for any other name.
bool piece_name_parse(const std::string& path, PieceName* name);
// The piece files in `dir` (not .tmp), sorted by stem, extension and index.
std::vector<PieceName> pieces_find(const std::string& dir);

// What one piece says about itself, read by the application that wrote it.
struct PieceFacts {
  std::string path;
  int64_t shard_index = 0;
  int64_t shard_count = 0;
  int64_t first = 0;   // the job's ordinal of the piece's first item
  int64_t count = 0;   // items in the piece
  int64_t total = 0;   // items in the whole job
  bool complete = false;
  std::vector<std::string> problems;  // found by the reader: unreadable, damaged, made with other settings
};

// The facts a piece's file name gives (index and count), for the report when the file itself cannot be read.
PieceFacts piece_facts_from_name(const std::string& path);
// The first of an application's pieces (each with a `facts` member) that its reader found no problem with.
template <typename Piece>
const Piece* piece_first_readable(const std::vector<Piece>& pieces) {
  for (const Piece& p : pieces) {
    if (p.facts.problems.empty()) return &p;
  }
  return nullptr;
}
// Puts an application's pieces in the job's order (by piece index; unknown pieces, index -1, first).
template <typename Piece>
void pieces_sort(std::vector<Piece>* pieces) {
  std::stable_sort(pieces->begin(), pieces->end(),
                   [](const Piece& a, const Piece& b) { return a.facts.shard_index < b.facts.shard_index; });
}
// The facts of the pieces, in their order.
template <typename Piece>
std::vector<PieceFacts> pieces_facts(const std::vector<Piece>& pieces) {
  std::vector<PieceFacts> facts;
  for (const Piece& p : pieces) facts.push_back(p.facts);
  return facts;
}
// InvalidArgument "cannot merge 4 pieces: 2 problems, nothing written".
Status pieces_refused(size_t pieces, size_t problems);

// Everything that stops a merge, one line each: the reader's problems, a piece count or job size that differs from
// what most pieces say, pieces missing or given twice, a range that is not the piece's fixed range (so gaps,
// overlaps and wrong counts), an incomplete piece. Empty: the pieces are exactly the job.
std::vector<std::string> pieces_check(const std::vector<PieceFacts>& pieces);

}  // namespace kiln
