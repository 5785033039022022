// Exact near-duplicate removal across a whole run: a face is kept only if its cosine to every kept face is below the
// threshold (the predecessor's dedup cache, but exact and unbounded), searched with faiss's flat inner-product index
// over the L2-normalised embeddings.
#pragma once

#include <cstdint>
#include <memory>

namespace faiss {
struct IndexFlatIP;
}

namespace kiln {

class FaceDedup {
 public:
  explicit FaceDedup(float threshold);
  ~FaceDedup();
  FaceDedup(const FaceDedup&) = delete;
  FaceDedup& operator=(const FaceDedup&) = delete;

  // -1 when the face is kept (and added), else the ordinal of the kept face it duplicates; *cosine its similarity.
  int64_t check_and_add(const float* embedding, float* cosine);
  // Adds a face known to be kept (a resumed run's earlier rows).
  void add(const float* embedding);
  int64_t kept() const;

 private:
  float m_threshold;
  std::unique_ptr<faiss::IndexFlatIP> m_index;
};

}  // namespace kiln
