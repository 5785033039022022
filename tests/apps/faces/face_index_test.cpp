// FaceIndex: exact search finds each face itself first; the IVF index, built for millions of faces, is measured
// against exact search on a clustered collection (faces of the same person lie close together) and must keep
// recall@10 high while searching an eighth of the lists.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kiln/apps/face_search.h"
#include "kiln/apps/faces.h"

namespace kiln {
namespace {

// `people` directions, `per_person` unit vectors around each (cosine about 0.7-0.9 to their centre).
std::vector<float> clustered_embeddings(int64_t people, int64_t per_person, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> out;
  std::vector<float> centre(kFaceEmbeddingSize);
  for (int64_t p = 0; p < people; ++p) {
    for (float& v : centre) v = normal(rng);
    for (int64_t i = 0; i < per_person; ++i) {
      double norm = 0;
      const size_t first = out.size();
      for (int32_t d = 0; d < kFaceEmbeddingSize; ++d) {
        out.push_back(centre[static_cast<size_t>(d)] + 0.8f * normal(rng));
        norm += static_cast<double>(out.back()) * out.back();
      }
      for (size_t d = first; d < out.size(); ++d) out[d] = static_cast<float>(out[d] / std::sqrt(norm));
    }
  }
  return out;
}

TEST(FaceIndex, ExactSearchFindsEachFaceFirstWithCosineOne) {
  const std::vector<float> faces = clustered_embeddings(50, 10, 1);
  FaceIndexSettings settings;  // auto: flat below 200000 faces
  auto index = FaceIndex::build(faces.data(), 500, settings);
  ASSERT_TRUE(index.is_ok()) << index.status().message();
  EXPECT_FALSE(index.value()->approximate());
  std::vector<FaceHit> hits;
  ASSERT_TRUE(index.value()->search(faces.data() + 123 * kFaceEmbeddingSize, 1, 10, &hits).is_ok());
  EXPECT_EQ(hits[0].row, 123);
  EXPECT_NEAR(hits[0].cosine, 1.0f, 1e-5f);
  for (size_t j = 1; j < 10; ++j) {
    EXPECT_EQ(hits[j].row / 10, 12) << "the same person's other faces come next";
    EXPECT_LE(hits[j].cosine, hits[j - 1].cosine);
  }
}

TEST(FaceIndex, IvfRecallAgainstExactSearch) {
  const int64_t n = 6000;
  const std::vector<float> faces = clustered_embeddings(300, 20, 2);
  FaceIndexSettings settings;
  settings.index_type = "ivf";
  settings.nlist = 64;  // 4 sqrt(N) = 309 would train for minutes on two cores
  settings.nprobe = 8;
  auto index = FaceIndex::build(faces.data(), n, settings);
  ASSERT_TRUE(index.is_ok()) << index.status().message();
  EXPECT_TRUE(index.value()->approximate());
  EXPECT_NE(index.value()->description().find("64 lists, nprobe 8"), std::string::npos)
      << index.value()->description();
  const std::vector<float> queries = clustered_embeddings(200, 1, 3);  // new people: the hard case
  std::vector<float> known(faces.begin(), faces.begin() + 200 * kFaceEmbeddingSize);
  auto recall_known = face_index_recall(*index.value(), faces.data(), n, known.data(), 200, 10);
  ASSERT_TRUE(recall_known.is_ok());
  EXPECT_GE(recall_known.value(), 0.95) << "faces of the collection";
  auto recall_new = face_index_recall(*index.value(), faces.data(), n, queries.data(), 200, 10);
  ASSERT_TRUE(recall_new.is_ok());
  EXPECT_GT(recall_new.value(), 0.2) << "unrelated queries have no near neighbours to find";
  settings.nprobe = 64;  // every list: exact
  auto full = FaceIndex::build(faces.data(), n, settings);
  ASSERT_TRUE(full.is_ok());
  EXPECT_DOUBLE_EQ(face_index_recall(*full.value(), faces.data(), n, queries.data(), 200, 10).value(), 1.0);
}

TEST(FaceIndex, IvfRefusesTooFewFaces) {
  const std::vector<float> faces = clustered_embeddings(3, 10, 4);
  FaceIndexSettings settings;
  settings.index_type = "ivf";
  auto index = FaceIndex::build(faces.data(), 30, settings);
  ASSERT_FALSE(index.is_ok());
  EXPECT_NE(index.status().message().find("use flat"), std::string::npos);
}

}  // namespace
}  // namespace kiln
