// FaceLanes: several FaceAnalyzers analysing successive batches at once, each on its share of the job's threads.
// ONNX Runtime splits one run of a few photos over its intra-op threads badly (one photo on two threads is slower
// than on one on the 2-core VM: docs/benchmarks.md §16, "Faces: several batches at once"), so on the CPU a job of
// small batches runs one analyzer per thread, each single-threaded: the detector of one batch runs on one core while
// the embedder of another runs on the other, and no thread waits at a barrier inside a run.
#pragma once

#include <deque>
#include <future>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "kiln/apps/faces.h"

namespace kiln {

// Images a job holds in its lanes at most: lanes x batch size stays at or under it (each lane holds one batch).
inline constexpr int64_t kFaceLaneImages = 16;

// How many lanes a job of `exec` runs: one per thread (threads 0: per core) while every stage runs on the CPU (mode
// cpu, or no GPU backend and no stage in mode gpu) and lanes x batch_size <= kFaceLaneImages; else 1 (a GPU takes
// one batch at a time, and big batches split well over the threads).
int32_t face_lanes_auto(const ExecSettings& exec, const FaceStageModes& stages);

class FaceLanes {
 public:
  // `lanes` analyzers (at least 1), each on exec.threads / lanes threads (at least 1).
  static Result<std::unique_ptr<FaceLanes>> open(const FaceSettings& settings, const ExecSettings& exec,
                                                 const FaceStageModes& stages, int32_t lanes, const LogFn& log = {});
  ~FaceLanes();  // waits for the batches still being analysed
  FaceLanes(const FaceLanes&) = delete;
  FaceLanes& operator=(const FaceLanes&) = delete;

  int32_t count() const { return static_cast<int32_t>(m_lanes.size()); }
  int64_t in_flight() const { return static_cast<int64_t>(m_pending.size()); }
  // Starts analysing `images` on the next lane; they must stay valid until finish() returns their faces. With every
  // lane busy, finish() the oldest first. One lane analyses on the caller's thread, before start() returns.
  Status start(const VarShapeBatchView& images);
  // The faces of the oldest batch started (as FaceAnalyzer::analyze gives them), once analysed.
  Status finish(std::vector<std::vector<Face>>* faces);
  // The first lane's stages; the photos and second passes of all lanes.
  FaceStageReport report() const;

 private:
  struct Lane {
    std::unique_ptr<FaceAnalyzer> analyzer;
    std::unique_ptr<ThreadPool> worker;  // one thread; none with a single lane
  };
  struct Pending {
    std::vector<std::vector<Face>> faces;
    std::future<Status> done;
  };
  FaceLanes() = default;

  FaceSettings m_settings;
  std::vector<Lane> m_lanes;
  std::deque<std::unique_ptr<Pending>> m_pending;  // oldest first
  int32_t m_lane_threads = 0;  // each lane's threads
  int64_t m_started = 0;
};

}  // namespace kiln
