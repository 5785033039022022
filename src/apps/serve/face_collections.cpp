#include "apps/serve/face_collections.h"

#include <algorithm>
#include <cctype>

#include "apps/faces/face_dedup.h"
#include "kiln/apps/face_search.h"
#include "kiln/apps/faces.h"

namespace kiln::serve {

struct FaceCollections::Collection {
  std::unique_ptr<FaceDedup> dedup;  // null without dedup
  std::vector<float> embeddings;     // id-major, kFaceEmbeddingSize each
  std::vector<std::string> images;
  std::vector<std::array<float, 4>> boxes;
  std::unique_ptr<FaceIndex> index;  // over the first `indexed` faces
  int64_t indexed = 0;
};

FaceCollections::FaceCollections(double dedup) : m_dedup(dedup) {}
FaceCollections::~FaceCollections() = default;

bool FaceCollections::name_valid(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

std::vector<CollectionAdded> FaceCollections::add(const std::string& name, const std::vector<CollectionFace>& faces) {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::unique_ptr<Collection>& collection = m_collections[name];
  if (!collection) {
    collection = std::make_unique<Collection>();
    if (m_dedup > 0) collection->dedup = std::make_unique<FaceDedup>(static_cast<float>(m_dedup));
  }
  std::vector<CollectionAdded> added;
  for (const CollectionFace& face : faces) {
    CollectionAdded result;
    if (collection->dedup) {
      result.duplicate_of = collection->dedup->check_and_add(face.embedding, &result.cosine);
      if (result.duplicate_of >= 0) {  // kept faces are numbered as they were added: their ordinal is their id
        added.push_back(result);
        continue;
      }
    }
    result.id = static_cast<int64_t>(collection->images.size());
    collection->embeddings.insert(collection->embeddings.end(), face.embedding, face.embedding + kFaceEmbeddingSize);
    collection->images.push_back(face.image);
    collection->boxes.push_back(face.box);
    added.push_back(result);
  }
  return added;
}

Result<std::vector<std::vector<CollectionHit>>> FaceCollections::search(const std::string& name,
                                                                        const std::vector<const float*>& queries,
                                                                        int64_t k, std::string* index) {
  std::lock_guard<std::mutex> lock(m_mutex);
  const auto it = m_collections.find(name);
  if (it == m_collections.end()) return invalid_argument("no collection named \"" + name + "\" (add faces to it first)");
  Collection& collection = *it->second;
  const auto count = static_cast<int64_t>(collection.images.size());
  if (!collection.index || collection.indexed != count) {
    FaceIndexSettings settings;  // kiln faces search's: flat, ivf from ivf_min_faces faces
    settings.index_file = "none";
    KILN_TRY_ASSIGN(collection.index, FaceIndex::build(collection.embeddings.data(), count, settings));
    collection.indexed = count;
  }
  *index = collection.index->description();
  std::vector<float> packed;
  for (const float* query : queries) packed.insert(packed.end(), query, query + kFaceEmbeddingSize);
  const int64_t wanted = std::min<int64_t>(k, count);
  std::vector<FaceHit> hits;
  if (!queries.empty() && wanted > 0) {
    KILN_TRY(collection.index->search(packed.data(), static_cast<int64_t>(queries.size()), wanted, &hits));
  }
  std::vector<std::vector<CollectionHit>> out(queries.size());
  for (size_t q = 0; q < queries.size() && wanted > 0; ++q) {
    for (int64_t j = 0; j < wanted; ++j) {
      const FaceHit& hit = hits[q * static_cast<size_t>(wanted) + static_cast<size_t>(j)];
      if (hit.row < 0) continue;
      const auto row = static_cast<size_t>(hit.row);
      out[q].push_back({hit.row, collection.images[row], collection.boxes[row], hit.cosine});
    }
  }
  return out;
}

int64_t FaceCollections::size(const std::string& name) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  const auto it = m_collections.find(name);
  return it == m_collections.end() ? -1 : static_cast<int64_t>(it->second->images.size());
}

}  // namespace kiln::serve
