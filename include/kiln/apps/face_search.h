// Searching the faces a `kiln faces` run wrote: the nearest faces (cosine of the L2-normalised embeddings) to query
// embeddings, exactly (faiss IndexFlatIP) or, for big collections, with an inverted-file index (faiss IndexIVFFlat,
// inner product, about 4 sqrt(N) lists, nprobe of them searched) whose recall is measured against exact search.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/params.h"
#include "kiln/status.h"

namespace kiln {

struct FaceIndexSettings {
  std::string index_type = "auto";  // auto (ivf from ivf_min_faces faces), flat (exact), ivf
  int64_t nlist = 0;                 // ivf lists; 0 = 4 sqrt(N), at most N / 39 (faiss's training minimum)
  int64_t nprobe = 32;               // ivf lists searched per query
  int64_t ivf_min_faces = 200000;    // auto: collections this big use ivf
};

// index_type, nlist, nprobe.
const ParamTable<FaceIndexSettings>& face_index_params();

struct FaceHit {
  int64_t row = -1;  // the face's row in the collection; -1 when fewer than k faces exist
  float cosine = 0;
};

class FaceIndex {
 public:
  // Indexes n embeddings (kFaceEmbeddingSize floats each, L2-normalised); ivf trains on them.
  static Result<std::unique_ptr<FaceIndex>> build(const float* embeddings, int64_t n, const FaceIndexSettings& settings);
  virtual ~FaceIndex() = default;
  // hits[q * k + j]: the j-th nearest face to query q, best first.
  virtual Status search(const float* queries, int64_t count, int64_t k, std::vector<FaceHit>* hits) const = 0;
  virtual bool approximate() const = 0;
  virtual std::string description() const = 0;  // e.g. "ivf (1789 lists, nprobe 32) over 200000 faces"
};

// Recall@k of `index` against exact search over the same embeddings: the share of the exact k nearest it returns.
Result<double> face_index_recall(const FaceIndex& index, const float* embeddings, int64_t n, const float* queries,
                                 int64_t count, int64_t k);

// The rows of a `kiln faces` output (.h5): embeddings (N x 512), each face's image path and box (x, y, w, h), and
// the face settings it was made with (JSON), for analyzing queries the same way.
struct FaceCollection {
  std::string settings;
  int64_t count = 0;
  std::vector<float> embeddings;
  std::vector<std::string> paths;
  std::vector<float> boxes;
};
Result<FaceCollection> face_collection_read(const std::string& path);

}  // namespace kiln
