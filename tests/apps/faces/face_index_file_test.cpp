// face_index_open: an ivf index is trained once and kept beside the collection; the next open loads it and
// searches exactly as the trained one did; other faces, another number of lists or a damaged file train again and
// replace it; "none" keeps no file; a file that cannot be written still gives an index.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "kiln/apps/face_search.h"
#include "kiln/apps/faces.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

FaceCollection random_collection(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  FaceCollection c;
  c.count = n;
  c.embeddings.resize(static_cast<size_t>(n * kFaceEmbeddingSize));
  for (int64_t i = 0; i < n; ++i) {
    float* e = c.embeddings.data() + i * kFaceEmbeddingSize;
    double norm = 0;
    for (int32_t d = 0; d < kFaceEmbeddingSize; ++d) {
      e[d] = normal(rng);
      norm += static_cast<double>(e[d]) * e[d];
    }
    for (int32_t d = 0; d < kFaceEmbeddingSize; ++d) e[d] = static_cast<float>(e[d] / std::sqrt(norm));
  }
  return c;
}

class FaceIndexFile : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("kiln_ivf_" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
    m_collection = random_collection(2000, 5);
    m_settings.index_type = "ivf";
    m_settings.nlist = 16;
    m_settings.nprobe = 4;
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::unique_ptr<FaceIndex> open(std::string* note) {
    auto index = face_index_open(m_collection, path(), m_settings, note);
    EXPECT_TRUE(index.is_ok()) << index.status().message();
    return index.is_ok() ? std::move(index.value()) : nullptr;
  }
  std::string path() const { return (m_dir / "faces.h5").string(); }
  std::vector<FaceHit> search(const FaceIndex& index) const {
    std::vector<FaceHit> hits;
    EXPECT_TRUE(index.search(m_collection.embeddings.data(), 50, 10, &hits).is_ok());
    return hits;
  }

  fs::path m_dir;
  FaceCollection m_collection;
  FaceIndexSettings m_settings;
};

bool same_hits(const std::vector<FaceHit>& a, const std::vector<FaceHit>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].row != b[i].row || a[i].cosine != b[i].cosine) return false;
  }
  return true;
}

TEST_F(FaceIndexFile, TrainedOnceThenLoadedAndSearchesTheSame) {
  std::string note;
  auto trained = open(&note);
  ASSERT_NE(trained, nullptr);
  EXPECT_NE(note.find("saved to"), std::string::npos) << note;
  ASSERT_TRUE(fs::exists(path() + ".ivf"));
  auto loaded = open(&note);
  ASSERT_NE(loaded, nullptr);
  EXPECT_NE(note.find("loaded from"), std::string::npos) << note;
  EXPECT_TRUE(loaded->approximate());
  EXPECT_EQ(loaded->description(), trained->description());
  EXPECT_TRUE(same_hits(search(*loaded), search(*trained)));
  // nprobe is a search setting: the saved index takes the one asked for now.
  m_settings.nprobe = 16;
  auto every_list = open(&note);
  EXPECT_NE(note.find("loaded from"), std::string::npos) << note;
  EXPECT_NE(every_list->description().find("nprobe 16"), std::string::npos) << every_list->description();
}

TEST_F(FaceIndexFile, OtherFacesOrListsOrDamageTrainAgain) {
  std::string note;
  ASSERT_NE(open(&note), nullptr);
  m_collection.embeddings[7] = -m_collection.embeddings[7];
  ASSERT_NE(open(&note), nullptr);
  EXPECT_NE(note.find("made for other faces, trained again; trained index saved"), std::string::npos) << note;
  m_settings.nlist = 20;
  ASSERT_NE(open(&note), nullptr);
  EXPECT_NE(note.find("another number of lists"), std::string::npos) << note;
  {
    std::fstream f(path() + ".ivf", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x5a');
  }
  auto index = open(&note);
  ASSERT_NE(index, nullptr);
  EXPECT_NE(note.find("damaged (checksum)"), std::string::npos) << note;
  EXPECT_NE(open(&note), nullptr);
  EXPECT_NE(note.find("loaded from"), std::string::npos) << "the damaged file was replaced: " << note;
}

TEST_F(FaceIndexFile, NoneKeepsNoFileAndAnUnwritableFileStillGivesAnIndex) {
  std::string note;
  m_settings.index_file = "none";
  ASSERT_NE(open(&note), nullptr);
  EXPECT_EQ(note, "");
  EXPECT_FALSE(fs::exists(path() + ".ivf"));
  m_settings.index_file = (m_dir / "not_a_folder").string() + "/index.ivf";
  std::ofstream(m_dir / "not_a_folder") << "a file";
  ASSERT_NE(open(&note), nullptr);
  EXPECT_NE(note.find("trained index not saved"), std::string::npos) << note;
  // Exact indexes are built in no time and never kept.
  m_settings.index_file.clear();
  m_settings.index_type = "flat";
  ASSERT_NE(open(&note), nullptr);
  EXPECT_FALSE(fs::exists(path() + ".ivf"));
}

}  // namespace
}  // namespace kiln
