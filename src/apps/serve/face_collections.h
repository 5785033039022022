// kiln serve's named face collections, kept in memory: faces added by POST /v1/faces?collection=NAME (each checked
// against the collection first with kiln faces' dedup: FaceDedup, exact then HNSW past 20,000 faces; a duplicate
// is not added) and searched by POST /v1/faces/search over kiln faces search's index (FaceIndex: faiss flat, IVF
// from 200,000 faces), rebuilt when the collection has grown since the last search. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::serve {

struct CollectionFace {
  const float* embedding = nullptr;  // kFaceEmbeddingSize values, L2-normalised
  std::string image;                 // the image's name (the multipart part's filename or name, or ?name=)
  std::array<float, 4> box{};        // x, y, width, height
};

struct CollectionAdded {
  int64_t id = -1;            // the face's id in the collection (0, 1, ...); -1 when it is a duplicate
  int64_t duplicate_of = -1;  // the id of the face it duplicates
  float cosine = 0;           // its highest cosine to a face already there (0 for the first face)
};

struct CollectionHit {
  int64_t id = -1;
  std::string image;
  std::array<float, 4> box{};
  float score = 0;  // cosine
};

class FaceCollections {
 public:
  // dedup: the cosine at or above which a face duplicates one already in the collection (0: no dedup).
  explicit FaceCollections(double dedup);
  ~FaceCollections();

  // A name of 1-64 letters, digits, '.', '_' or '-'.
  static bool name_valid(const std::string& name);
  // Adds the faces, in order, to `name` (created when new).
  std::vector<CollectionAdded> add(const std::string& name, const std::vector<CollectionFace>& faces);
  // The k nearest faces of the collection to each query (kFaceEmbeddingSize floats each), best first; InvalidArgument
  // for an unknown collection. *index: the index searched, e.g. "flat over 12 faces".
  Result<std::vector<std::vector<CollectionHit>>> search(const std::string& name, const std::vector<const float*>& queries,
                                                         int64_t k, std::string* index);
  int64_t size(const std::string& name) const;  // -1 when unknown
  double dedup() const { return m_dedup; }

 private:
  struct Collection;
  double m_dedup;
  mutable std::mutex m_mutex;
  std::map<std::string, std::unique_ptr<Collection>> m_collections;
};

}  // namespace kiln::serve
