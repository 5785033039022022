#include "apps/serve/face_collections.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "apps/faces/face_dedup.h"
#include "apps/faces/faces_rows.h"
#include "io/tensor_writer.h"
#include "kiln/apps/face_search.h"

namespace kiln::serve {

namespace {

constexpr int64_t kBoxColumn = kFaceEmbeddingSize + 1;  // after the embedding and the image index (faces_rows.h)

// The settings attribute of a `kiln faces` output (its face settings, dedup), which kiln faces search reads.
std::string collection_settings_json(const FaceSettings& face, double dedup) {
  nlohmann::json settings;
  FaceSettings copy = face;
  for (const auto& entry : face_params().entries()) {
    std::visit([&](const auto& v) { settings[entry.spec.name] = v; }, entry.get(&copy));
  }
  settings["dedup"] = dedup;
  settings["dedup_exact_faces"] = kFaceDedupExactFaces;
  return settings.dump();
}

}  // namespace

struct FaceCollections::Collection {
  std::unique_ptr<FaceDedup> dedup;  // null without dedup
  std::vector<float> embeddings;     // id-major, kFaceEmbeddingSize each
  std::vector<float> rows;           // faces_row_floats() each (the saved file's)
  std::vector<std::string> images;
  int64_t images_seen = 0;  // images added (with or without faces): the rows' image_index
  int64_t duplicates = 0;
  std::unique_ptr<FaceIndex> index;  // over the first `indexed` faces
  int64_t indexed = 0;
};

FaceCollections::FaceCollections(double dedup, FaceSettings face, std::string folder)
    : m_dedup(dedup), m_face(std::move(face)), m_folder(std::move(folder)) {}
FaceCollections::~FaceCollections() = default;

bool FaceCollections::name_valid(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

FaceCollections::Collection& FaceCollections::collection_make(const std::string& name) {
  std::unique_ptr<Collection>& collection = m_collections[name];
  if (!collection) {
    collection = std::make_unique<Collection>();
    if (m_dedup > 0) collection->dedup = std::make_unique<FaceDedup>(static_cast<float>(m_dedup));
  }
  return *collection;
}

Status FaceCollections::load() {
  if (m_folder.empty()) return Status::ok();
  std::error_code ec;
  std::filesystem::create_directories(m_folder, ec);
  if (ec) return io_error("serve: --collections-dir " + m_folder + ": " + ec.message());
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(m_folder, ec)) {
    if (entry.path().extension() == ".h5" && name_valid(entry.path().stem().string())) files.push_back(entry.path());
  }
  if (ec) return io_error("serve: --collections-dir " + m_folder + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::lock_guard<std::mutex> lock(m_mutex);
  const int64_t width = faces_row_floats();
  for (const auto& path : files) {
    auto file = faces_file_read(path.string());
    if (!file.is_ok()) return io_error("serve: collection " + path.string() + ": " + file.status().message());
    Collection& collection = collection_make(path.stem().string());
    for (int64_t r = 0; r < file.value().count; ++r) {
      const float* row = file.value().rows.data() + r * width;
      if (collection.dedup) collection.dedup->add(row);
      collection.embeddings.insert(collection.embeddings.end(), row, row + kFaceEmbeddingSize);
      collection.rows.insert(collection.rows.end(), row, row + width);
      collection.images.push_back(file.value().paths[static_cast<size_t>(r)]);
    }
    collection.images_seen = static_cast<int64_t>(file.value().number_of("images", 0));
    collection.duplicates = static_cast<int64_t>(file.value().number_of("duplicates", 0));
  }
  return Status::ok();
}

std::vector<CollectionAdded> FaceCollections::add(const std::string& name,
                                                  const std::vector<std::vector<CollectionFace>>& images,
                                                  Status* saved) {
  std::lock_guard<std::mutex> lock(m_mutex);
  Collection& collection = collection_make(name);
  std::vector<CollectionAdded> added;
  for (const auto& faces : images) {
    for (const CollectionFace& face : faces) {
      const float* embedding = face.face->embedding.data();
      CollectionAdded result;
      if (collection.dedup) {
        result.duplicate_of = collection.dedup->check_and_add(embedding, &result.cosine);
        if (result.duplicate_of >= 0) {  // kept faces are numbered as they were added: their ordinal is their id
          ++collection.duplicates;
          added.push_back(result);
          continue;
        }
      }
      result.id = static_cast<int64_t>(collection.images.size());
      collection.embeddings.insert(collection.embeddings.end(), embedding, embedding + kFaceEmbeddingSize);
      face_row_append(*face.face, collection.images_seen, &collection.rows);
      collection.images.push_back(face.image);
      added.push_back(result);
    }
    ++collection.images_seen;
  }
  *saved = save(name, collection);
  return added;
}

// The whole collection as a `kiln faces` output, written beside and renamed over the last one.
Status FaceCollections::save(const std::string& name, const Collection& collection) const {
  if (m_folder.empty()) return Status::ok();
  const std::string path = m_folder + "/" + name + ".h5";
  const std::string partial = m_folder + "/." + name + ".partial.h5";
  TensorWriter writer;
  KILN_TRY(writer.open_arrays(partial, faces_output_arrays(), PixelType::kF32));
  KILN_TRY(faces_rows_write(&writer, collection.rows.data(), static_cast<int64_t>(collection.images.size())));
  KILN_TRY(writer.finish(collection.images, faces_output_attributes(collection_settings_json(m_face, m_dedup), m_face,
                                                                    collection.images_seen, collection.duplicates)));
  if (std::rename(partial.c_str(), path.c_str()) != 0) return errno_status("serve: collection " + path);
  return Status::ok();
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
  const int64_t width = faces_row_floats();
  std::vector<std::vector<CollectionHit>> out(queries.size());
  for (size_t q = 0; q < queries.size() && wanted > 0; ++q) {
    for (int64_t j = 0; j < wanted; ++j) {
      const FaceHit& hit = hits[q * static_cast<size_t>(wanted) + static_cast<size_t>(j)];
      if (hit.row < 0) continue;
      const float* box = collection.rows.data() + hit.row * width + kBoxColumn;
      out[q].push_back({hit.row, collection.images[static_cast<size_t>(hit.row)], {box[0], box[1], box[2], box[3]},
                        hit.cosine});
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
