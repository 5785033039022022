// FaceDedup past its exact limit: the HNSW graph that takes over must find the duplicates the exact search finds
// (measured on a stream grown from the real embeddings of the test photos and their mirror images) and give the same
// decisions on every run.
#include <gtest/gtest.h>

#include <limits>

#include "apps/faces/face_dedup.h"
#include "common/face_dedup_stream.h"
#include "infer/infer_test_util.h"
#include "kiln/apps/faces.h"

namespace kiln {
namespace {

constexpr float kThreshold = 0.7f;

// The embeddings of the faces in the test photos and in their mirror images (four faces, two people).
const std::vector<float>& real_embeddings() {
  static const std::vector<float> embeddings = [] {
    std::string error;
    std::vector<float> out = test::face_embeddings_of_photos(test::photo_paths(), &error);
    EXPECT_TRUE(error.empty()) << error;
    return out;
  }();
  return embeddings;
}

struct Decisions {
  std::vector<int64_t> duplicate_of;
  std::vector<float> cosine;
  bool approximate = false;
};

Decisions dedup_all(const std::vector<float>& stream, int64_t exact_faces) {
  FaceDedup dedup(kThreshold, exact_faces);
  Decisions d;
  const int64_t n = static_cast<int64_t>(stream.size()) / kFaceEmbeddingSize;
  for (int64_t i = 0; i < n; ++i) {
    float cosine = 0;
    d.duplicate_of.push_back(dedup.check_and_add(stream.data() + i * kFaceEmbeddingSize, &cosine));
    d.cosine.push_back(cosine);
  }
  d.approximate = dedup.approximate();
  return d;
}

TEST(FaceDedup, TheGraphFindsTheDuplicatesTheExactSearchFinds) {
  const std::vector<float>& real = real_embeddings();
  ASSERT_GE(real.size(), 4u * kFaceEmbeddingSize) << "the photos' faces were not found";
  const std::vector<float> stream = test::face_dedup_stream(real, kFaceEmbeddingSize, 4000, 0.3, 7);
  const Decisions exact = dedup_all(stream, std::numeric_limits<int64_t>::max());
  const Decisions graph = dedup_all(stream, 300);
  EXPECT_FALSE(exact.approximate);
  EXPECT_TRUE(graph.approximate);
  int64_t exact_duplicates = 0;
  int64_t both = 0;
  for (size_t i = 0; i < exact.duplicate_of.size(); ++i) {
    if (exact.duplicate_of[i] < 0) continue;
    ++exact_duplicates;
    both += graph.duplicate_of[i] >= 0 ? 1 : 0;
  }
  EXPECT_GT(exact_duplicates, 900) << "the stream repeats 30 % of its faces";
  const double recall = static_cast<double>(both) / static_cast<double>(exact_duplicates);
  EXPECT_GE(recall, 0.99) << both << " of " << exact_duplicates;
  for (size_t i = 0; i < graph.duplicate_of.size(); ++i) {
    if (graph.duplicate_of[i] >= 0) {
      EXPECT_GE(graph.cosine[i], kThreshold) << "face " << i;  // the graph's hits are real similarities
    }
  }
}

TEST(FaceDedup, TheSameStreamGivesTheSameDecisions) {
  const std::vector<float>& real = real_embeddings();
  ASSERT_FALSE(real.empty());
  const std::vector<float> stream = test::face_dedup_stream(real, kFaceEmbeddingSize, 1500, 0.3, 11);
  const Decisions first = dedup_all(stream, 200);
  const Decisions second = dedup_all(stream, 200);
  EXPECT_EQ(first.duplicate_of, second.duplicate_of);
  EXPECT_EQ(first.cosine, second.cosine);
}

TEST(FaceDedup, FacesAddedOnResumeCountTowardsTheLimit) {
  const std::vector<float>& real = real_embeddings();
  ASSERT_FALSE(real.empty());
  const std::vector<float> stream = test::face_dedup_stream(real, kFaceEmbeddingSize, 60, 0.0, 3);
  FaceDedup dedup(kThreshold, 50);
  for (int64_t i = 0; i < 50; ++i) dedup.add(stream.data() + i * kFaceEmbeddingSize);
  EXPECT_TRUE(dedup.approximate());
  float cosine = 0;
  EXPECT_EQ(dedup.check_and_add(stream.data() + 7 * kFaceEmbeddingSize, &cosine), 7);
  EXPECT_NEAR(cosine, 1.0f, 1e-5f);
  EXPECT_EQ(dedup.kept(), 50);
}

}  // namespace
}  // namespace kiln
