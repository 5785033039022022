// Near-duplicate removal across a whole run: a face is kept only if no kept face has a cosine of at least the
// threshold to it. The kept faces (L2-normalised embeddings) are searched exactly with faiss's flat inner-product
// index until there are `exact_faces` of them; from then on through an HNSW graph (faiss IndexHNSWFlat) built from
// them and grown face by face. The flat search is O(kept) per face, hours at a million faces; the graph's is about
// logarithmic, at a recall against the exact search measured in bench/face_dedup_scale (docs/benchmarks.md).
// Faces are added one at a time in input order, so the same inputs give the same decisions however many threads run.
#pragma once

#include <cstdint>
#include <memory>

#include "kiln/apps/faces.h"

namespace faiss {
struct Index;
}

namespace kiln {

class FaceDedup {
 public:
  explicit FaceDedup(float threshold, int64_t exact_faces = kFaceDedupExactFaces);
  ~FaceDedup();
  FaceDedup(const FaceDedup&) = delete;
  FaceDedup& operator=(const FaceDedup&) = delete;

  // -1 when the face is kept (and added), else the ordinal of the kept face it duplicates; *cosine the highest
  // similarity found.
  int64_t check_and_add(const float* embedding, float* cosine);
  // Adds a face known to be kept (a resumed run's earlier rows).
  void add(const float* embedding);
  int64_t kept() const;
  // True once the kept faces are searched through the graph.
  bool approximate() const { return m_approximate; }

 private:
  void switch_to_graph();

  float m_threshold;
  int64_t m_exact_faces;
  bool m_approximate = false;
  std::unique_ptr<faiss::Index> m_index;
};

}  // namespace kiln
