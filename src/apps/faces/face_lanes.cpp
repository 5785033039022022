#include "apps/faces/face_lanes.h"

#include <algorithm>

#include "apps/faces/face_prepare.h"

namespace kiln {

int32_t face_lanes_auto(const ExecSettings& exec, const FaceStageModes& stages) {
  const FaceStage* all[] = {&stages.detection, &stages.embedding, &stages.enhancement, &stages.quality};
  const bool cpu_only = BackendRegistry::instance().backends().size() == 1;  // the CPU is always there, last
  for (const FaceStage* stage : all) {
    if (stage->mode == ExecMode::kCpu) continue;
    if (stage->mode == ExecMode::kGpu || !cpu_only) return 1;
  }
  const int32_t threads = exec.threads > 0 ? exec.threads : ThreadPool::hardware_threads();
  const int64_t fit = kFaceLaneImages / std::max<int64_t>(1, exec.batch_size);
  return static_cast<int32_t>(std::clamp<int64_t>(fit, 1, std::max(1, threads)));
}

Result<std::unique_ptr<FaceLanes>> FaceLanes::open(const FaceSettings& settings, const ExecSettings& exec,
                                                   const FaceStageModes& stages, int32_t lanes, const LogFn& log) {
  std::unique_ptr<FaceLanes> out(new FaceLanes());
  out->m_settings = settings;
  lanes = std::max(1, lanes);
  ExecSettings each = exec;
  if (lanes > 1) {
    const int32_t threads = exec.threads > 0 ? exec.threads : ThreadPool::hardware_threads();
    each.threads = std::max(1, threads / lanes);
  }
  out->m_lane_threads = each.threads;
  // The first alone (it unpacks the models where they are not yet), then the others at once.
  KILN_TRY_ASSIGN(std::unique_ptr<FaceAnalyzer> first, FaceAnalyzer::open(settings, each, stages, log));
  std::vector<std::future<Result<std::unique_ptr<FaceAnalyzer>>>> others;  // lanes 1, 2, ...
  for (int32_t k = 1; k < lanes; ++k) {
    others.push_back(std::async(std::launch::async, [&] { return FaceAnalyzer::open(settings, each, stages, log); }));
  }
  for (int32_t k = 0; k < lanes; ++k) {
    Lane lane;
    if (k == 0) {
      lane.analyzer = std::move(first);
    } else {
      KILN_TRY_ASSIGN(lane.analyzer, others[static_cast<size_t>(k - 1)].get());
    }
    if (lanes > 1) lane.worker = std::make_unique<ThreadPool>(1);
    out->m_lanes.push_back(std::move(lane));
  }
  return out;
}

FaceLanes::~FaceLanes() {
  for (const auto& pending : m_pending) {
    if (pending->done.valid()) pending->done.wait();
  }
}

Status FaceLanes::start(const VarShapeBatchView& images) {
  if (in_flight() >= count()) {
    return invalid_argument("faces: every lane is busy; take the oldest batch's faces first");
  }
  Lane& lane = m_lanes[static_cast<size_t>(m_started++ % count())];
  auto pending = std::make_unique<Pending>();
  FaceAnalyzer* const analyzer = lane.analyzer.get();
  std::vector<std::vector<Face>>* const faces = &pending->faces;
  if (!lane.worker) {
    std::promise<Status> now;
    now.set_value(analyzer->analyze(images, faces));
    pending->done = now.get_future();
  } else {
    // Each lane's batches run in the order started, one at a time, on the lane's own thread.
    auto task = std::make_shared<std::packaged_task<Status()>>([analyzer, images, faces] {
      return analyzer->analyze(images, faces);
    });
    pending->done = task->get_future();
    lane.worker->submit([task] { (*task)(); });
  }
  m_pending.push_back(std::move(pending));
  return Status::ok();
}

Status FaceLanes::finish(std::vector<std::vector<Face>>* faces) {
  if (m_pending.empty()) return invalid_argument("faces: no batch is being analysed");
  const std::unique_ptr<Pending> oldest = std::move(m_pending.front());
  m_pending.pop_front();
  const Status st = oldest->done.get();
  *faces = std::move(oldest->faces);
  return st;
}

FaceStageReport FaceLanes::report() const {
  FaceStageReport r = m_lanes.front().analyzer->report();
  if (m_lanes.size() == 1) return r;
  const std::string first_note = face_second_pass_note(r.second_pass_photos, r.photos);
  for (size_t k = 1; k < m_lanes.size(); ++k) {
    const FaceStageReport lane = m_lanes[k].analyzer->report();
    r.photos += lane.photos;
    r.second_pass_photos += lane.second_pass_photos;
  }
  if (face_prepare_second_pass(m_settings)) {
    const size_t at = r.enhancement.rfind(first_note);
    if (at != std::string::npos) r.enhancement.resize(at);
    r.enhancement += face_second_pass_note(r.second_pass_photos, r.photos);
  }
  r.batch_memory += "; " + std::to_string(m_lanes.size()) + " batches at once, each on its own analyzer (" +
                    std::to_string(m_lane_threads) + (m_lane_threads == 1 ? " thread)" : " threads)");
  return r;
}

}  // namespace kiln
