// FaceIndex on faiss: IndexFlatIP (exact) or IndexIVFFlat over an IndexFlatIP quantizer (inner product).
#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kiln/apps/face_search.h"
#include "kiln/apps/faces.h"

namespace kiln {

namespace {

constexpr int64_t kMinPointsPerList = 39;  // faiss warns below this many training points per list
// k-means trains on a sample of at most this many faces per list (faiss's default, 256, takes hours on a few cores
// for millions of faces; recall is measured with face_index_recall).
constexpr int kMaxTrainingPointsPerList = 64;

class FaissFaceIndex final : public FaceIndex {
 public:
  // quantizer: a built ivf index's coarse quantizer (a loaded one owns its own); approximate: ivf.
  FaissFaceIndex(std::unique_ptr<faiss::IndexFlatIP> quantizer, std::unique_ptr<faiss::Index> index, std::string text,
                 bool approximate)
      : m_quantizer(std::move(quantizer)), m_index(std::move(index)), m_text(std::move(text)),
        m_approximate(approximate) {}

  Status search(const float* queries, int64_t count, int64_t k, std::vector<FaceHit>* hits) const override {
    if (k < 1) return invalid_argument("face search: k must be at least 1");
    std::vector<float> distances(static_cast<size_t>(count * k));
    std::vector<faiss::Index::idx_t> labels(static_cast<size_t>(count * k));
    try {
      m_index->search(count, queries, k, distances.data(), labels.data());
    } catch (const std::exception& e) {
      return invalid_argument(std::string("faiss: ") + e.what());
    }
    hits->resize(static_cast<size_t>(count * k));
    for (size_t i = 0; i < hits->size(); ++i) (*hits)[i] = {labels[i], labels[i] < 0 ? 0.0f : distances[i]};
    return Status::ok();
  }

  bool approximate() const override { return m_approximate; }
  std::string description() const override { return m_text; }

  Result<std::vector<uint8_t>> serialize() const override {
    try {
      faiss::VectorIOWriter writer;
      faiss::write_index(m_index.get(), &writer);
      return std::move(writer.data);
    } catch (const std::exception& e) {
      return invalid_argument(std::string("faiss: ") + e.what());
    }
  }

 private:
  std::unique_ptr<faiss::IndexFlatIP> m_quantizer;  // a built ivf index's coarse quantizer (the index refers to it)
  std::unique_ptr<faiss::Index> m_index;
  std::string m_text;
  bool m_approximate;
};

std::string ivf_text(const faiss::IndexIVF& index, int64_t n) {
  return "ivf (" + std::to_string(index.nlist) + " lists, nprobe " + std::to_string(index.nprobe) + ") over " +
         std::to_string(n) + " faces";
}

}  // namespace

const ParamTable<FaceIndexSettings>& face_index_params() {
  static const ParamTable<FaceIndexSettings> table = [] {
    using C = FaceIndexSettings;
    ParamTable<C> t;
    t.add_string_choice({.name = "index_type",
                         .help = "flat (exact), ivf (inverted lists: approximate, for millions of faces) or auto (ivf "
                                 "from 200000 faces)",
                         .choices = {"auto", "flat", "ivf"}},
                        [](C& c) -> std::string& { return c.index_type; });
    t.add({.name = "nlist", .help = "ivf: the number of lists (0 = 4 sqrt(N))", .min = 0},
          [](C& c) -> int64_t& { return c.nlist; });
    t.add({.name = "nprobe", .help = "ivf: lists searched per query (more: higher recall, slower)", .min = 1},
          [](C& c) -> int64_t& { return c.nprobe; });
    t.add({.name = "index_file",
           .help = "ivf: the file that keeps the trained index for later searches (default: beside the faces "
                   "output, <output>.ivf; none: train every time)"},
          [](C& c) -> std::string& { return c.index_file; });
    return t;
  }();
  return table;
}

bool face_index_uses_ivf(int64_t n, const FaceIndexSettings& settings) {
  return settings.index_type == "ivf" || (settings.index_type == "auto" && n >= settings.ivf_min_faces);
}

int64_t face_index_nlist(int64_t n, const FaceIndexSettings& settings) {
  const int64_t nlist =
      settings.nlist > 0 ? settings.nlist : static_cast<int64_t>(4 * std::sqrt(static_cast<double>(n)));
  return std::clamp<int64_t>(nlist, 1, std::max<int64_t>(1, n / kMinPointsPerList));
}

Result<std::unique_ptr<FaceIndex>> FaceIndex::build(const float* embeddings, int64_t n,
                                                    const FaceIndexSettings& settings) {
  try {
    if (!face_index_uses_ivf(n, settings)) {
      auto flat = std::make_unique<faiss::IndexFlatIP>(kFaceEmbeddingSize);
      flat->add(n, embeddings);
      const std::string text = "exact (flat) over " + std::to_string(n) + " faces";
      return std::unique_ptr<FaceIndex>(std::make_unique<FaissFaceIndex>(nullptr, std::move(flat), text, false));
    }
    if (n < kMinPointsPerList) {
      return invalid_argument("face search: an ivf index needs at least " + std::to_string(kMinPointsPerList) +
                              " faces (use flat)");
    }
    const int64_t nlist = face_index_nlist(n, settings);
    auto quantizer = std::make_unique<faiss::IndexFlatIP>(kFaceEmbeddingSize);
    auto index = std::make_unique<faiss::IndexIVFFlat>(quantizer.get(), kFaceEmbeddingSize, nlist,
                                                       faiss::METRIC_INNER_PRODUCT);
    index->cp.max_points_per_centroid = kMaxTrainingPointsPerList;
    index->train(n, embeddings);
    index->add(n, embeddings);
    index->nprobe = std::min(settings.nprobe, nlist);
    const std::string text = ivf_text(*index, n);
    return std::unique_ptr<FaceIndex>(
        std::make_unique<FaissFaceIndex>(std::move(quantizer), std::move(index), text, true));
  } catch (const std::exception& e) {
    return invalid_argument(std::string("faiss: ") + e.what());
  }
}

Result<std::unique_ptr<FaceIndex>> FaceIndex::deserialize(const std::vector<uint8_t>& bytes, int64_t n,
                                                          const FaceIndexSettings& settings) {
  try {
    faiss::VectorIOReader reader;
    reader.data = bytes;
    std::unique_ptr<faiss::Index> index(faiss::read_index(&reader));
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(index.get());
    if (ivf == nullptr || ivf->d != kFaceEmbeddingSize || ivf->ntotal != n) {
      return invalid_argument("face search: the saved index is not an ivf index of these faces");
    }
    ivf->nprobe = std::min<size_t>(static_cast<size_t>(settings.nprobe), ivf->nlist);
    const std::string text = ivf_text(*ivf, n);
    return std::unique_ptr<FaceIndex>(std::make_unique<FaissFaceIndex>(nullptr, std::move(index), text, true));
  } catch (const std::exception& e) {
    return invalid_argument(std::string("faiss: ") + e.what());
  }
}

Result<double> face_index_recall(const FaceIndex& index, const float* embeddings, int64_t n, const float* queries,
                                 int64_t count, int64_t k) {
  FaceIndexSettings exact_settings;
  exact_settings.index_type = "flat";
  KILN_TRY_ASSIGN(const std::unique_ptr<FaceIndex> exact, FaceIndex::build(embeddings, n, exact_settings));
  std::vector<FaceHit> truth, found;
  KILN_TRY(exact->search(queries, count, k, &truth));
  KILN_TRY(index.search(queries, count, k, &found));
  int64_t relevant = 0, hit = 0;
  for (int64_t q = 0; q < count; ++q) {
    std::set<int64_t> rows;
    for (int64_t j = 0; j < k; ++j) rows.insert(found[static_cast<size_t>(q * k + j)].row);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t row = truth[static_cast<size_t>(q * k + j)].row;
      if (row < 0) continue;
      ++relevant;
      hit += rows.count(row);
    }
  }
  return relevant == 0 ? 1.0 : static_cast<double>(hit) / static_cast<double>(relevant);
}

}  // namespace kiln
