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
  std::string index_file;            // ivf: the trained index's file; "" = beside the collection, "none" = no file
};

// index_type, nlist, nprobe, index_file.
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
  // The trained index in faiss's serialization, and back (with settings.nprobe applied); n: the faces it holds.
  virtual Result<std::vector<uint8_t>> serialize() const = 0;
  static Result<std::unique_ptr<FaceIndex>> deserialize(const std::vector<uint8_t>& bytes, int64_t n,
                                                        const FaceIndexSettings& settings);
};

// Whether build() makes an ivf index for n faces, and with how many lists.
bool face_index_uses_ivf(int64_t n, const FaceIndexSettings& settings);
int64_t face_index_nlist(int64_t n, const FaceIndexSettings& settings);

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

// The index of a collection read from `collection_path`. An ivf index is trained once and kept in
// settings.index_file (default "<collection_path>.ivf"), tied to the collection by its face count, the CRC-32 of its
// embeddings and the number of lists, and checked by a CRC-32 of its own: later searches load it instead of
// training. A stale or damaged file is trained again and replaced; one that cannot be written costs only the next
// search's training. `note` says which happened ("" when nothing worth saying did).
Result<std::unique_ptr<FaceIndex>> face_index_open(const FaceCollection& collection, const std::string& collection_path,
                                                   const FaceIndexSettings& settings, std::string* note);

}  // namespace kiln
