// Joining data files by copying their chunks keeps the sources' filter pipeline: files written before kiln added
// the Fletcher-32 trailer merge into a file without it, and a mix of both is refused before anything is written.
#include <gtest/gtest.h>

#include <filesystem>

#include "apps/render/hdf5_encoder.h"
#include "apps/render/hdf5_test_util.h"
#include "common/test_util.h"
#include "io/hdf5_zstd_register.h"

namespace kiln {
namespace {

using test::Hdf5Job;

hdf5::FileAttributes file_attributes(const Hdf5Job& job, int64_t first, int64_t count) {
  hdf5::FileAttributes a;
  a.dataset = job.attributes();
  a.compression = "zstd-1";
  a.total = job.total;
  a.count = count;
  a.first_index = first;
  return a;
}

// A committed file of images [first, first + count) as kiln writes it now (fletcher32) or wrote it before.
void data_file_write(const std::string& path, const Hdf5Job& job, int64_t first, int64_t count, bool fletcher32) {
  hdf5::DataFile file;
  ASSERT_TRUE(
      file.create(path, job.layout(), file_attributes(job, first, count), Compression::kZstd, 1, fletcher32).is_ok());
  auto encoder = hdf5_encoder_create(Compression::kZstd, 1, job.width, job.height, job.dtype);
  ASSERT_TRUE(encoder.is_ok());
  std::vector<float> sequences;
  std::vector<int64_t> index;
  std::vector<int8_t> labels;
  for (int64_t i = first; i < first + count; ++i) {
    std::vector<uint8_t> pixels = test::image_bytes(job, i);
    ImageView view{pixels.data(), job.width, job.height, 1, job.width, job.dtype};
    std::vector<uint8_t> chunk;
    ASSERT_TRUE((*encoder)->encode(view, chunk).is_ok());
    if (!fletcher32) chunk.resize(chunk.size() - 4);  // the bare zstd frame of earlier versions
    ASSERT_TRUE(file.image_write(i - first, chunk.data(), chunk.size()).is_ok());
    for (int64_t t = 0; t < job.seq_len; ++t) sequences.push_back(test::pattern_sequence(i, t, 0));
    index.push_back(test::pattern_index(i));
    labels.push_back(test::pattern_label(i));
  }
  ASSERT_TRUE(file.rows_append(sequences.data(), index.data(), labels.data(), count).is_ok());
  ASSERT_TRUE(file.close(true).is_ok());
}

// a.h5 (images 0-11, written without the trailer) and b.h5 (12-19, with it when asked) concatenated into out.h5.
Status two_files_concat(const test::TempDir& dir, const Hdf5Job& job, bool second_fletcher32) {
  data_file_write(dir.file("a.h5"), job, 0, 12, false);
  data_file_write(dir.file("b.h5"), job, 12, 8, second_fletcher32);
  return hdf5::files_concat(dir.file("out.h5"), {dir.file("a.h5"), dir.file("b.h5")}, job.layout(),
                            file_attributes(job, 0, 20));
}

TEST(Hdf5Concat, FilesWithoutFletcher32MergeIntoAFileWithoutIt) {
  ASSERT_TRUE(hdf5_zstd_register().is_ok());
  Hdf5Job job{.total = 20};
  test::TempDir dir;
  const Status merged = two_files_concat(dir, job, false);
  ASSERT_TRUE(merged.is_ok()) << merged.to_string();
  const std::string out = dir.file("out.h5");
  auto contents = test::contents_read(out);
  ASSERT_TRUE(contents.is_ok()) << contents.status().to_string();
  for (int64_t i = 0; i < 20; ++i) {
    const std::vector<uint8_t> expected = test::image_bytes(job, i);
    const auto begin = contents->images.begin() + i * static_cast<int64_t>(expected.size());
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), begin)) << "image " << i;
  }
}

TEST(Hdf5Concat, AMixOfPipelinesIsRefusedAndWritesNothing) {
  ASSERT_TRUE(hdf5_zstd_register().is_ok());
  Hdf5Job job{.total = 20};
  test::TempDir dir;
  const Status merged = two_files_concat(dir, job, true);
  const std::string out = dir.file("out.h5");
  EXPECT_EQ(merged.code(), Errc::kIoError);
  EXPECT_NE(merged.message().find("Fletcher-32"), std::string::npos) << merged.message();
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
}

}  // namespace
}  // namespace kiln
