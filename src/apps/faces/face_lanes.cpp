#include "apps/faces/face_lanes.h"

#include <algorithm>

#include "apps/faces/face_prepare.h"

namespace kiln {

bool face_stages_cpu_only(const FaceStageModes& stages) {
  const FaceStage* all[] = {&stages.detection, &stages.embedding, &stages.enhancement, &stages.quality};
  const bool cpu_only = BackendRegistry::instance().backends().size() == 1;  // the CPU is always there, last
  for (const FaceStage* stage : all) {
    if (stage->mode == ExecMode::kCpu) continue;
    if (stage->mode == ExecMode::kGpu || !cpu_only) return false;
  }
  return true;
}

int32_t face_lanes_auto(const ExecSettings& exec, const FaceStageModes& stages) {
  if (!face_stages_cpu_only(stages)) return 1;
  return std::max(1, exec.threads > 0 ? exec.threads : ThreadPool::hardware_threads());
}

Result<std::unique_ptr<FaceLanes>> FaceLanes::open(const FaceSettings& settings, const ExecSettings& exec,
                                                   const FaceStageModes& stages, int32_t lanes, const LogFn& log) {
  std::unique_ptr<FaceLanes> out(new FaceLanes());
  out->m_settings = settings;
  out->m_batch_size = std::max<int64_t>(1, exec.batch_size);
  lanes = std::max(1, lanes);
  ExecSettings each = exec;
  if (lanes > 1) {
    const int32_t threads = exec.threads > 0 ? exec.threads : ThreadPool::hardware_threads();
    each.threads = std::max(1, threads / lanes);
    if (face_stages_cpu_only(stages)) {
      out->m_images_per_call = 1;
      each.batch_size = 1;
    }
  }
  out->m_lane_threads = each.threads;
  // The first alone (it unpacks the models where they are not yet), then the others at once.
  KILN_TRY_ASSIGN(std::unique_ptr<FaceAnalyzer> first, FaceAnalyzer::open(settings, each, stages, log));
  std::vector<std::future<Result<std::unique_ptr<FaceAnalyzer>>>> others;  // lanes 1, 2, ...
  for (int32_t k = 1; k < lanes; ++k) {
    others.push_back(std::async(std::launch::async, [&] { return FaceAnalyzer::open(settings, each, stages, log); }));
  }
  out->m_lanes.push_back(std::move(first));
  for (auto& other : others) {
    KILN_TRY_ASSIGN(std::unique_ptr<FaceAnalyzer> analyzer, other.get());
    out->m_lanes.push_back(std::move(analyzer));
  }
  // The first lane on top: a job of one photo runs there, and report() shows its stages.
  for (auto it = out->m_lanes.rbegin(); it != out->m_lanes.rend(); ++it) out->m_free.push_back(it->get());
  if (lanes > 1) out->m_workers = std::make_unique<ThreadPool>(lanes);
  return out;
}

FaceLanes::~FaceLanes() {
  for (const auto& pending : m_pending) {
    for (const auto& piece : pending->done) {
      if (piece.valid()) piece.wait();
    }
  }
}

int64_t FaceLanes::batches_at_once() const {
  if (m_images_per_call == 0) return count();
  const int64_t pieces_per_batch = (m_batch_size + m_images_per_call - 1) / m_images_per_call;
  return (count() + pieces_per_batch - 1) / pieces_per_batch + 1;
}

FaceAnalyzer* FaceLanes::analyzer_take() {
  const std::lock_guard<std::mutex> lock(m_free_mutex);
  FaceAnalyzer* const analyzer = m_free.back();  // never empty: a worker per analyzer, each holding one at most
  m_free.pop_back();
  return analyzer;
}

void FaceLanes::analyzer_give_back(FaceAnalyzer* analyzer) {
  const std::lock_guard<std::mutex> lock(m_free_mutex);
  m_free.push_back(analyzer);
}

Status FaceLanes::start(const VarShapeBatchView& images) {
  if (in_flight() >= batches_at_once()) {
    return invalid_argument("faces: enough batches are being analysed; take the oldest batch's faces first");
  }
  auto pending = std::make_unique<Pending>();
  if (!m_workers) {
    pending->pieces.resize(1);
    std::promise<Status> now;
    now.set_value(m_lanes.front()->analyze(images, &pending->pieces[0]));
    pending->done.push_back(now.get_future());
    m_pending.push_back(std::move(pending));
    return Status::ok();
  }
  const int64_t n = images.count;
  const int64_t per_call = m_images_per_call > 0 ? m_images_per_call : std::max<int64_t>(1, n);
  pending->pieces.resize(static_cast<size_t>((n + per_call - 1) / per_call));
  for (int64_t first = 0, k = 0; first < n; first += per_call, ++k) {
    const VarShapeBatchView piece{images.images + first, std::min(per_call, n - first), images.space};
    std::vector<std::vector<Face>>* const faces = &pending->pieces[static_cast<size_t>(k)];
    // The photos go to the analyzers in the order started, each to whichever comes free first.
    auto task = std::make_shared<std::packaged_task<Status()>>([this, piece, faces] {
      FaceAnalyzer* const analyzer = analyzer_take();
      const Status st = analyzer->analyze(piece, faces);
      analyzer_give_back(analyzer);
      return st;
    });
    pending->done.push_back(task->get_future());
    m_workers->submit([task] { (*task)(); });
  }
  m_pending.push_back(std::move(pending));
  return Status::ok();
}

Status FaceLanes::finish(std::vector<std::vector<Face>>* faces) {
  if (m_pending.empty()) return invalid_argument("faces: no batch is being analysed");
  const std::unique_ptr<Pending> oldest = std::move(m_pending.front());
  m_pending.pop_front();
  Status first_error = Status::ok();
  for (auto& piece : oldest->done) {
    const Status st = piece.get();
    if (first_error.is_ok() && !st.is_ok()) first_error = st;
  }
  faces->clear();
  for (auto& piece : oldest->pieces) {
    for (auto& image_faces : piece) faces->push_back(std::move(image_faces));
  }
  return first_error;
}

FaceStageReport FaceLanes::report() const {
  FaceStageReport r = m_lanes.front()->report();
  if (m_lanes.size() == 1) return r;
  const std::string first_note = face_second_pass_note(r.second_pass_photos, r.photos);
  for (size_t k = 1; k < m_lanes.size(); ++k) {
    const FaceStageReport lane = m_lanes[k]->report();
    r.photos += lane.photos;
    r.second_pass_photos += lane.second_pass_photos;
  }
  if (face_prepare_second_pass(m_settings)) {
    const size_t at = r.enhancement.rfind(first_note);
    if (at != std::string::npos) r.enhancement.resize(at);
    r.enhancement += face_second_pass_note(r.second_pass_photos, r.photos);
  }
  const std::string threads = std::to_string(m_lane_threads) + (m_lane_threads == 1 ? " thread" : " threads");
  r.batch_memory += m_images_per_call > 0
                        ? "; " + std::to_string(m_lanes.size()) + " analyzers (" + threads +
                              " each) taking the batches' photos one at a time"
                        : "; " + std::to_string(m_lanes.size()) + " batches at once, each on its own analyzer (" +
                              threads + ")";
  return r;
}

}  // namespace kiln
