// kiln serve's named face collections: faces added by POST /v1/faces?collection=NAME (each checked against the
// collection first with kiln faces' dedup: FaceDedup, exact then HNSW past 20,000 faces; a duplicate is not added)
// and searched by POST /v1/faces/search over kiln faces search's index (FaceIndex: faiss flat, IVF from 200,000
// faces), rebuilt when the collection has grown since the last search. In memory; with a folder
// (--collections-dir), each collection is also the `kiln faces` output DIR/NAME.h5 (its rows, paths and settings:
// `kiln faces search --index DIR/NAME.h5` reads it), written again after each addition and read back at start.
// Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/apps/faces.h"
#include "kiln/status.h"

namespace kiln::serve {

struct CollectionFace {
  const Face* face = nullptr;
  std::string image;  // the image's name (the multipart part's filename or name, or ?name=)
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
  // dedup: the cosine at or above which a face duplicates one already in the collection (0: no dedup). face: the
  // settings the faces are found with (written with a saved collection). folder: "" keeps them in memory only.
  FaceCollections(double dedup, FaceSettings face, std::string folder);
  ~FaceCollections();

  // The collections saved in the folder (every NAME.h5 of a valid name); an error names the file that cannot be read.
  Status load();
  // A name of 1-64 letters, digits, '.', '_' or '-'.
  static bool name_valid(const std::string& name);
  // Adds each image's faces (images in order), to `name` (created when new), and with a folder saves it; *saved says
  // why it could not be (the faces stay added in memory).
  std::vector<CollectionAdded> add(const std::string& name, const std::vector<std::vector<CollectionFace>>& images,
                                   Status* saved);
  // The k nearest faces of the collection to each query (kFaceEmbeddingSize floats each), best first; InvalidArgument
  // for an unknown collection. *index: the index searched, e.g. "exact (flat) over 12 faces".
  Result<std::vector<std::vector<CollectionHit>>> search(const std::string& name, const std::vector<const float*>& queries,
                                                         int64_t k, std::string* index);
  int64_t size(const std::string& name) const;  // -1 when unknown

 private:
  struct Collection;
  Collection& collection_make(const std::string& name);
  Status save(const std::string& name, const Collection& collection) const;

  double m_dedup;
  FaceSettings m_face;
  std::string m_folder;
  mutable std::mutex m_mutex;
  std::map<std::string, std::unique_ptr<Collection>> m_collections;
};

}  // namespace kiln::serve
