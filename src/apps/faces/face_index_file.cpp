// face_index_open: the trained ivf index of a faces output kept in a file beside it. Layout (little endian):
// "KILNIVF1", u64 face count, u32 CRC-32 of the embeddings' bytes, u32 0, i64 lists, u64 n = the faiss bytes'
// length, the n bytes of faiss's write_index, u32 CRC-32 of everything before it.
#include <cstring>

#include "io/crc32.h"
#include "io/durable_file.h"
#include "kiln/apps/face_search.h"
#include "kiln/apps/faces.h"

namespace kiln {

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'I', 'V', 'F', '1'};
constexpr size_t kHeaderBytes = 8 + 8 + 4 + 4 + 8 + 8;
constexpr int64_t kMaxFileBytes = int64_t{1} << 40;

struct IndexKey {
  uint64_t count = 0;
  uint32_t embeddings_crc = 0;
  int64_t nlist = 0;
};

IndexKey key_of(const FaceCollection& c, const FaceIndexSettings& settings) {
  Crc32 crc;
  crc.update(c.embeddings.data(), c.embeddings.size() * sizeof(float));
  return {static_cast<uint64_t>(c.count), crc.value(), face_index_nlist(c.count, settings)};
}

// Writes value at *at and advances it.
template <typename T>
void put(uint8_t** at, T value) {
  std::memcpy(*at, &value, sizeof(T));
  *at += sizeof(T);
}

template <typename T>
T get(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

std::vector<uint8_t> file_bytes(const IndexKey& key, const std::vector<uint8_t>& faiss_bytes) {
  std::vector<uint8_t> out(kHeaderBytes + faiss_bytes.size() + 4);
  uint8_t* at = out.data();
  std::memcpy(at, kMagic, sizeof(kMagic));
  at += sizeof(kMagic);
  put(&at, key.count);
  put(&at, key.embeddings_crc);
  put(&at, uint32_t{0});
  put(&at, key.nlist);
  put(&at, static_cast<uint64_t>(faiss_bytes.size()));
  if (!faiss_bytes.empty()) std::memcpy(at, faiss_bytes.data(), faiss_bytes.size());
  at += faiss_bytes.size();
  Crc32 crc;
  crc.update(out.data(), out.size() - 4);
  put(&at, crc.value());
  return out;
}

// The faiss bytes of a file made for `key`; InvalidArgument naming what does not match or is damaged.
Result<std::vector<uint8_t>> faiss_bytes_of(const std::vector<uint8_t>& file, const IndexKey& key) {
  if (file.size() < kHeaderBytes + 4 || std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0) {
    return invalid_argument("not a kiln ivf index file");
  }
  Crc32 crc;
  crc.update(file.data(), file.size() - 4);
  if (crc.value() != get<uint32_t>(file.data() + file.size() - 4)) return invalid_argument("damaged (checksum)");
  const uint8_t* p = file.data() + sizeof(kMagic);
  if (get<uint64_t>(p) != key.count || get<uint32_t>(p + 8) != key.embeddings_crc) {
    return invalid_argument("made for other faces");
  }
  if (get<int64_t>(p + 16) != key.nlist) return invalid_argument("made with another number of lists");
  const auto size = get<uint64_t>(p + 24);
  if (size != file.size() - kHeaderBytes - 4) return invalid_argument("damaged (length)");
  return std::vector<uint8_t>(file.begin() + kHeaderBytes, file.end() - 4);
}

}  // namespace

Result<std::unique_ptr<FaceIndex>> face_index_open(const FaceCollection& collection, const std::string& collection_path,
                                                   const FaceIndexSettings& settings, std::string* note) {
  note->clear();
  const bool keep = face_index_uses_ivf(collection.count, settings) && settings.index_file != "none";
  if (!keep) return FaceIndex::build(collection.embeddings.data(), collection.count, settings);
  const std::string path = settings.index_file.empty() ? collection_path + ".ivf" : settings.index_file;
  const IndexKey key = key_of(collection, settings);
  std::string stale;
  if (auto file = file_read_all(path, kMaxFileBytes); file.is_ok()) {
    auto bytes = faiss_bytes_of(file.value(), key);
    if (bytes.is_ok()) {
      auto index = FaceIndex::deserialize(bytes.value(), collection.count, settings);
      if (index.is_ok()) {
        *note = "trained index loaded from " + path;
        return index;
      }
      stale = index.status().message();
    } else {
      stale = bytes.status().message();
    }
  }
  KILN_TRY_ASSIGN(std::unique_ptr<FaceIndex> index,
                  FaceIndex::build(collection.embeddings.data(), collection.count, settings));
  *note = stale.empty() ? "" : path + ": " + stale + ", trained again; ";
  auto faiss_bytes = index->serialize();
  Status saved = faiss_bytes.status();
  if (saved.is_ok()) {
    const std::vector<uint8_t> bytes = file_bytes(key, faiss_bytes.value());
    saved = file_write_atomic(path, bytes.data(), bytes.size());
  }
  *note += saved.is_ok() ? "trained index saved to " + path : "trained index not saved: " + saved.message();
  return index;
}

}  // namespace kiln
