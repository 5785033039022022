#include "apps/faces/face_dedup.h"

#include <faiss/IndexFlat.h>

#include "kiln/apps/faces.h"

namespace kiln {

FaceDedup::FaceDedup(float threshold)
    : m_threshold(threshold), m_index(std::make_unique<faiss::IndexFlatIP>(kFaceEmbeddingSize)) {}

FaceDedup::~FaceDedup() = default;

int64_t FaceDedup::check_and_add(const float* embedding, float* cosine) {
  *cosine = 0;
  if (m_index->ntotal > 0) {
    float best = 0;
    faiss::Index::idx_t label = -1;
    m_index->search(1, embedding, 1, &best, &label);
    if (label >= 0 && best >= m_threshold) {
      *cosine = best;
      return label;
    }
    *cosine = best;
  }
  m_index->add(1, embedding);
  return -1;
}

void FaceDedup::add(const float* embedding) { m_index->add(1, embedding); }

int64_t FaceDedup::kept() const { return m_index->ntotal; }

}  // namespace kiln
