// FaceLanes: several FaceAnalyzers analysing a job's photos at once, each on its share of the job's threads.
// ONNX Runtime splits one run of a few photos over its intra-op threads badly (one photo on two threads is slower
// than on one on the 2-core VM), and on one thread its CPU kernels take more time per photo at batch 8 than at
// batch 1 (docs/benchmarks.md §16.2 and §16.4). So on the CPU a job runs one single-threaded analyzer per thread, and
// each batch is cut into single photos that the analyzers take in order as each comes free: the detector of one
// photo runs on one core while the embedder of another runs on the other, no thread waits at a barrier inside a run,
// and no analyzer idles while another finishes a big batch.
#pragma once

#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include "core/thread_pool.h"
#include "kiln/apps/faces.h"

namespace kiln {

// Whether every stage runs on the CPU: mode cpu, or no GPU backend and no stage in mode gpu.
bool face_stages_cpu_only(const FaceStageModes& stages);

// How many analyzers a job of `exec` runs: one per thread (threads 0: per core) where every stage runs on the CPU;
// else 1 (a GPU takes one batch at a time, and big batches split well over the threads).
int32_t face_lanes_auto(const ExecSettings& exec, const FaceStageModes& stages);

class FaceLanes {
 public:
  // `lanes` analyzers (at least 1), each on exec.threads / lanes threads (at least 1). With several lanes and every
  // stage on the CPU each analyzer takes one photo per call; otherwise each takes whole batches.
  static Result<std::unique_ptr<FaceLanes>> open(const FaceSettings& settings, const ExecSettings& exec,
                                                 const FaceStageModes& stages, int32_t lanes, const LogFn& log = {});
  ~FaceLanes();  // waits for the batches still being analysed
  FaceLanes(const FaceLanes&) = delete;
  FaceLanes& operator=(const FaceLanes&) = delete;

  int32_t count() const { return static_cast<int32_t>(m_lanes.size()); }
  // Batches to keep started so that no analyzer waits for the next: one per lane, or where batches are cut into
  // photos, enough batches to give every lane a photo, and one more.
  int64_t batches_at_once() const;
  int64_t in_flight() const { return static_cast<int64_t>(m_pending.size()); }
  // Starts analysing `images`; they must stay valid until finish() returns their faces. With batches_at_once()
  // started, finish() the oldest first. A single lane analyses on the caller's thread, before start() returns.
  Status start(const VarShapeBatchView& images);
  // The faces of the oldest batch started (as FaceAnalyzer::analyze gives them), once analysed.
  Status finish(std::vector<std::vector<Face>>* faces);
  // The first lane's stages; the photos and second passes of all lanes.
  FaceStageReport report() const;

 private:
  struct Pending {
    std::vector<std::vector<std::vector<Face>>> pieces;  // each piece's faces, in the batch's order
    std::vector<std::future<Status>> done;
  };
  FaceLanes() = default;
  FaceAnalyzer* analyzer_take();
  void analyzer_give_back(FaceAnalyzer* analyzer);

  FaceSettings m_settings;
  std::vector<std::unique_ptr<FaceAnalyzer>> m_lanes;
  std::unique_ptr<ThreadPool> m_workers;  // one thread per lane; none with a single lane
  std::mutex m_free_mutex;
  std::vector<FaceAnalyzer*> m_free;  // the analyzers no worker holds now
  std::deque<std::unique_ptr<Pending>> m_pending;  // oldest first
  int64_t m_batch_size = 1;
  int64_t m_images_per_call = 0;  // a piece's photos; 0: the whole batch
  int32_t m_lane_threads = 0;     // each lane's threads
};

}  // namespace kiln
