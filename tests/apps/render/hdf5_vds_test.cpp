// Shards + manifest + VDS, missing-shard refusal, `kiln info` text, and the h5py fixtures.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "apps/render/hdf5_info.h"
#include "apps/render/hdf5_test_util.h"
#include "apps/render/hdf5_vds.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using test::Hdf5Job;
using test::TempDir;

// Shards of 300, 300, 300 and 100 images.
Hdf5Job shard_job() { return {.images_per_file = 300, .total = 1000, .seq_channels = 4}; }

// shard_job() written to `out` by each test.
class Hdf5Vds : public ::testing::Test {
 protected:
  const Hdf5Job job = shard_job();
  TempDir dir;
  const std::string out = dir.file("out.h5");
};

TEST_F(Hdf5Vds, EqualsTheConcatenatedShards) {
  ASSERT_TRUE(test::job_run(job, out, {128}).is_ok());
  auto vds = test::contents_read(out);
  ASSERT_TRUE(vds.is_ok()) << vds.status().to_string();
  test::Hdf5Contents joined;
  for (int64_t k = 0; k < 4; ++k) {
    auto shard = test::contents_read(hdf5::shard_path(out, k));
    ASSERT_TRUE(shard.is_ok());
    joined.images.insert(joined.images.end(), shard->images.begin(), shard->images.end());
    joined.sequences.insert(joined.sequences.end(), shard->sequences.begin(), shard->sequences.end());
    joined.index.insert(joined.index.end(), shard->index.begin(), shard->index.end());
    joined.labels.insert(joined.labels.end(), shard->labels.begin(), shard->labels.end());
  }
  EXPECT_EQ(vds->images, joined.images);
  EXPECT_EQ(vds->sequences, joined.sequences);
  EXPECT_EQ(vds->index, joined.index);
  EXPECT_EQ(vds->labels, joined.labels);
  test::contents_expect(*vds, job, 0, job.total);
  EXPECT_EQ(vds->sequence_dims, (std::vector<hsize_t>{1000, 12, 4}));

  // Moving the whole folder keeps the VDS working (sources are relative).
  const fs::path moved = dir.path() / "moved";
  fs::create_directories(moved);
  for (const auto& e : fs::directory_iterator(dir.path())) {
    if (e.path() != moved) fs::rename(e.path(), moved / e.path().filename());
  }
  auto again = test::contents_read((moved / "out.h5").string());
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again->images, vds->images);
}

TEST_F(Hdf5Vds, ManifestListsEveryShard) {
  ASSERT_TRUE(test::job_run(job, out, {1000}).is_ok());
  std::ifstream in(hdf5::manifest_path(out));
  const auto manifest = nlohmann::json::parse(in);
  ASSERT_EQ(manifest["shards"].size(), 4u);
  EXPECT_EQ(manifest["vds"], "out.h5");
  EXPECT_EQ(manifest["totals"]["images"], 1000);
  uint64_t bytes = 0;
  for (int k = 0; k < 4; ++k) {
    const auto& s = manifest["shards"][static_cast<size_t>(k)];
    EXPECT_EQ(s["file"], hdf5::file_name(hdf5::shard_path(out, k)));
    EXPECT_EQ(s["first_index"], k * 300);
    EXPECT_EQ(s["count"], k < 3 ? 300 : 100);
    EXPECT_EQ(s["bytes"], fs::file_size(hdf5::shard_path(out, k)));
    bytes += s["bytes"].get<uint64_t>();
  }
  EXPECT_EQ(manifest["totals"]["bytes"], bytes);
  EXPECT_EQ(manifest["attributes"]["stride"], 1);
  EXPECT_EQ(manifest["attributes"]["compression"], "zstd-1");
  EXPECT_FALSE(fs::exists(hdf5::manifest_path(out) + ".tmp"));
}

TEST_F(Hdf5Vds, FinishRefusesAMissingShard) {
  auto sink = hdf5_sink_create(job.spec(out));
  ASSERT_TRUE((*sink)->open(job.layout(), job.attributes()).is_ok());
  ASSERT_TRUE(test::job_write(**sink, job, 0, job.total, {400}).is_ok());
  fs::remove(hdf5::shard_path(out, 2));
  Status s = (*sink)->finish();
  EXPECT_EQ(s.code(), Errc::kIoError);
  EXPECT_NE(s.message().find("out_batch_0002.h5"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(out));  // no VDS that would read zeros

  s = hdf5_vds_build(out);
  EXPECT_EQ(s.code(), Errc::kIoError);
  EXPECT_NE(s.message().find("out_batch_0002.h5"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("missing"), std::string::npos) << s.message();
}

TEST_F(Hdf5Vds, RebuildFromShardsOnDisk) {
  ASSERT_TRUE(test::job_run(job, out, {1000}).is_ok());
  auto first = test::contents_read(out);
  ASSERT_TRUE(first.is_ok());
  fs::remove(out);
  fs::remove(hdf5::manifest_path(out));
  Status s = hdf5_vds_build(out);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  auto second = test::contents_read(out);
  ASSERT_TRUE(second.is_ok());
  EXPECT_EQ(first->images, second->images);
  EXPECT_EQ(second->attributes.dataset.created_at, job.attributes().created_at);
  EXPECT_TRUE(fs::exists(hdf5::manifest_path(out)));

  // A stray extra shard (from another job) is refused.
  fs::copy_file(hdf5::shard_path(out, 0), hdf5::shard_path(out, 9));
  EXPECT_EQ(hdf5_vds_build(out).code(), Errc::kIoError);
  EXPECT_EQ(hdf5_vds_build(dir.file("nothing.h5")).code(), Errc::kIoError);
}

TEST(Hdf5Info, DescribesSingleFileVdsAndManifest) {
  TempDir dir;
  const Hdf5Job single{.total = 50};
  ASSERT_TRUE(test::job_run(single, dir.file("single.h5"), {50}).is_ok());
  std::string text;
  Status s = hdf5_info_print(dir.file("single.h5"), &text);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  for (const char* needle : {"images", "uint8", "(50, 16, 24)", "zstd (32015) level 1", "sequences", "labels",
                             "index", "int64", "int8", "stride", "resolution", "[24, 16, 100]", "complete",
                             "first_index", "config", "prices.csv", "created_at", "zstd-1"}) {
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  }

  const Hdf5Job job = shard_job();
  ASSERT_TRUE(test::job_run(job, dir.file("out.h5"), {1000}).is_ok());
  text.clear();
  s = hdf5_info_print(dir.file("out.h5"), &text);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  for (const char* needle : {"virtual, 4 sources", "out_batch_0003.h5", "shards (4", "(1000, 12, 4)"}) {
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  }
  text.clear();
  s = hdf5_info_print(hdf5::manifest_path(dir.file("out.h5")), &text);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  EXPECT_NE(text.find("out_batch_0002.h5"), std::string::npos) << text;
  EXPECT_NE(text.find("yes"), std::string::npos) << text;
  fs::remove(hdf5::shard_path(dir.file("out.h5"), 1));
  text.clear();
  ASSERT_TRUE(hdf5_info_print(hdf5::manifest_path(dir.file("out.h5")), &text).is_ok());
  EXPECT_NE(text.find("missing"), std::string::npos) << text;

  EXPECT_EQ(hdf5_info_print(dir.file("nope.h5"), &text).code(), Errc::kIoError);
  test::write_text_file(dir.file("bad.h5"), "not hdf5");
  EXPECT_EQ(hdf5_info_print(dir.file("bad.h5"), &text).code(), Errc::kIoError);
}

// Writes fixed files for tests/apps/render/test_hdf5_h5py.py into $KILN_H5PY_FIXTURE_DIR (skipped otherwise).
TEST(Hdf5Fixture, WriteFilesForH5py) {
  const char* env = std::getenv("KILN_H5PY_FIXTURE_DIR");
  if (env == nullptr || env[0] == '\0') GTEST_SKIP() << "KILN_H5PY_FIXTURE_DIR not set";
  const std::string dir = env;
  fs::create_directories(dir);
  Hdf5Job zstd{.total = 5000};  // two parts merged
  Hdf5Job gzip{.compression = Compression::kGzip,
               .dtype = PixelType::kF32,
               .total = 300,
               .seq_channels = 4,
               .has_labels = false};
  Hdf5Job shards{.images_per_file = 300, .total = 1000};
  Hdf5Job none{.compression = Compression::kNone, .total = 10};
  const std::pair<const char*, Hdf5Job*> files[] = {
      {"zstd_u8.h5", &zstd}, {"gzip_f32.h5", &gzip}, {"shards.h5", &shards}, {"none_u8.h5", &none}};
  for (const auto& [name, job] : files) {
    OutputSpec spec = job->spec((fs::path(dir) / name).string());
    spec.overwrite = true;
    auto sink = hdf5_sink_create(spec);
    ASSERT_TRUE(sink.is_ok());
    ASSERT_TRUE((*sink)->open(job->layout(), job->attributes()).is_ok());
    Status s = test::job_write(**sink, *job, 0, job->total, {700});
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    s = (*sink)->finish();
    ASSERT_TRUE(s.is_ok()) << s.to_string();
  }
}

}  // namespace
}  // namespace kiln
