#include "apps/faces/face_dedup.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <omp.h>

#include <vector>

namespace kiln {
namespace {

// Links per node and search breadths, chosen with bench/face_dedup_scale (20,000 faces, the graph from 2,000): these
// found every duplicate the flat search found, at 800 faces/s; 32/64/64 no more at 650; 16/32/32 and 24/40/48 missed
// 0.3-0.8 %; 8/16/16 6 %. On 30,000 faces (the graph from 3,000) they found 98.8 % (docs/benchmarks.md §9.1).
constexpr int kGraphLinks = 16;
constexpr int kGraphBuildBreadth = 48;
constexpr int kGraphSearchBreadth = 64;

// faiss spreads even a one-face search over OpenMP's threads, which then spin between faces on the cores the rest of
// the job needs: twice the CPU time for the same speed (bench/face_dedup_scale). Each call runs on its caller alone.
class OneOpenMpThread {
 public:
  OneOpenMpThread() : m_before(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneOpenMpThread() { omp_set_num_threads(m_before); }
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  int m_before;
};

}  // namespace

FaceDedup::FaceDedup(float threshold, int64_t exact_faces)
    : m_threshold(threshold),
      m_exact_faces(exact_faces),
      m_index(std::make_unique<faiss::IndexFlatIP>(kFaceEmbeddingSize)) {}

FaceDedup::~FaceDedup() = default;

int64_t FaceDedup::check_and_add(const float* embedding, float* cosine) {
  const OneOpenMpThread one;
  *cosine = 0;
  if (m_index->ntotal > 0) {
    float best = 0;
    faiss::Index::idx_t label = -1;
    m_index->search(1, embedding, 1, &best, &label);
    if (label >= 0) *cosine = best;
    if (label >= 0 && best >= m_threshold) return label;
  }
  add(embedding);
  return -1;
}

void FaceDedup::add(const float* embedding) {
  const OneOpenMpThread one;
  m_index->add(1, embedding);
  if (!m_approximate && m_index->ntotal >= m_exact_faces) switch_to_graph();
}

void FaceDedup::switch_to_graph() {
  auto graph = std::make_unique<faiss::IndexHNSWFlat>(kFaceEmbeddingSize, kGraphLinks, faiss::METRIC_INNER_PRODUCT);
  graph->hnsw.efConstruction = kGraphBuildBreadth;
  graph->hnsw.efSearch = kGraphSearchBreadth;
  std::vector<float> row(kFaceEmbeddingSize);
  // One at a time: faiss builds a graph from many vectors on several threads, in an order that varies between runs.
  for (faiss::Index::idx_t i = 0; i < m_index->ntotal; ++i) {
    m_index->reconstruct(i, row.data());
    graph->add(1, row.data());
  }
  m_index = std::move(graph);
  m_approximate = true;
}

int64_t FaceDedup::kept() const { return m_index->ntotal; }

}  // namespace kiln
