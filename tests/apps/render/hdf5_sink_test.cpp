// HDF5 sink: round trips for every compression / dtype / mode, crash + resume, refusing existing or foreign output.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

#include "common/test_util.h"
#include "apps/render/hdf5_test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using test::Hdf5Job;
using test::TempDir;

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.push_back(fs::relative(e.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every attribute except created_at, as a comparable tuple.
auto attributes_key(const hdf5::FileAttributes& a) {
  const DatasetAttributes& d = a.dataset;
  return std::make_tuple(d.seq_len, d.stride, d.line_width, d.style, d.width, d.height, d.dpi, d.source, d.column,
                         d.skipped_windows, d.dropped_no_future, d.label_horizon, d.label_threshold, d.kiln_version,
                         d.config_json, a.compression, a.total, a.images_per_file, a.count, a.first_index,
                         a.complete);
}

using RoundTripParam = std::tuple<Compression, PixelType, int64_t>;

class Hdf5SinkRoundTrip : public ::testing::TestWithParam<RoundTripParam> {};

TEST_P(Hdf5SinkRoundTrip, ReadsBackEveryImage) {
  const auto [compression, dtype, images_per_file] = GetParam();
  Hdf5Job job{.compression = compression, .dtype = dtype, .images_per_file = images_per_file};
  job.total = 9000;  // single file: parts of 4096, 4096, 808; shards of 1500: 6
  job.has_labels = dtype == PixelType::kU8;
  job.seq_channels = dtype == PixelType::kU8 ? 1 : 4;
  TempDir dir;
  const std::string out = dir.file("demo.h5");

  auto sink = hdf5_sink_create(job.spec(out));
  ASSERT_TRUE(sink.is_ok()) << sink.status().to_string();
  auto start = (*sink)->open(job.layout(), job.attributes());
  ASSERT_TRUE(start.is_ok()) << start.status().to_string();
  EXPECT_EQ(*start, 0);
  // Batch sizes that cross part (4096) and shard (1500) boundaries, including single images.
  Status s = test::job_write(**sink, job, 0, job.total, {1, 700, 4097, 333, 2500});
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  EXPECT_GT((*sink)->bytes_written(), 0u);
  s = (*sink)->finish();
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  EXPECT_TRUE((*sink)->finish().is_ok());  // idempotent

  auto contents = test::contents_read(out);
  ASSERT_TRUE(contents.is_ok()) << contents.status().to_string();
  test::contents_expect(*contents, job, 0, job.total);
  EXPECT_TRUE(contents->attributes.complete);
  EXPECT_EQ(contents->attributes.count, job.total);
  EXPECT_EQ(contents->attributes.first_index, 0);
  EXPECT_EQ(contents->attributes.compression, hdf5::compression_label(compression, 1));
  hdf5::FileAttributes want;
  want.dataset = job.attributes();
  want.compression = hdf5::compression_label(compression, 1);
  want.total = job.total;
  want.images_per_file = images_per_file;
  want.count = job.total;
  want.first_index = 0;
  want.complete = true;
  EXPECT_EQ(attributes_key(contents->attributes), attributes_key(want));
  EXPECT_EQ(contents->attributes.dataset.created_at, want.dataset.created_at);

  if (images_per_file == 0) {
    EXPECT_EQ(files_in(dir.path()), std::vector<std::string>{"demo.h5"});  // parts merged and removed
    EXPECT_EQ((*sink)->describe(), out + " (" + hdf5::compression_label(compression, 1) + ", 3 parts)");
  } else {
    EXPECT_EQ(files_in(dir.path()),
              (std::vector<std::string>{"demo.h5", "demo.manifest.json", "demo_batch_0000.h5", "demo_batch_0001.h5",
                                        "demo_batch_0002.h5", "demo_batch_0003.h5", "demo_batch_0004.h5",
                                        "demo_batch_0005.h5"}));
    EXPECT_EQ((*sink)->describe(), out + " (" + hdf5::compression_label(compression, 1) + ", 6 shards + VDS)");
    for (int64_t k = 0; k < 6; ++k) {
      auto shard = test::contents_read(hdf5::shard_path(out, k));
      ASSERT_TRUE(shard.is_ok()) << shard.status().to_string();
      test::contents_expect(*shard, job, k * 1500, 1500);
      EXPECT_EQ(shard->attributes.first_index, k * 1500);
      EXPECT_EQ(shard->attributes.count, 1500);
      EXPECT_TRUE(shard->attributes.complete);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, Hdf5SinkRoundTrip,
                         ::testing::Combine(::testing::Values(Compression::kZstd, Compression::kGzip,
                                                              Compression::kNone),
                                            ::testing::Values(PixelType::kU8, PixelType::kF32),
                                            ::testing::Values(int64_t{0}, int64_t{1500})));

TEST(Hdf5Sink, ImagesAreStoredOnePerChunkWithTheDeclaredFilter) {
  Hdf5Job job{.total = 10};
  TempDir dir;
  const std::string out = dir.file("one.h5");
  ASSERT_TRUE(test::job_run(job, out, {3}).is_ok());
  auto file = hdf5::file_open_read(out);
  ASSERT_TRUE(file.is_ok());
  const hid_t ds = H5Dopen2(file->get(), "images", H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(ds);
  hsize_t chunk[3] = {0, 0, 0};
  ASSERT_EQ(H5Pget_chunk(dcpl, 3, chunk), 3);
  EXPECT_EQ(chunk[0], 1u);
  EXPECT_EQ(chunk[1], 16u);
  EXPECT_EQ(chunk[2], 24u);
  ASSERT_EQ(H5Pget_nfilters(dcpl), 2);
  unsigned flags = 0, cd[4] = {0}, config = 0;
  size_t nelmts = 4;
  EXPECT_EQ(H5Pget_filter2(dcpl, 0, &flags, &nelmts, cd, 0, nullptr, &config), 32015);
  EXPECT_EQ(nelmts, 1u);
  EXPECT_EQ(cd[0], 1u);
  nelmts = 4;
  EXPECT_EQ(H5Pget_filter2(dcpl, 1, &flags, &nelmts, cd, 0, nullptr, &config), H5Z_FILTER_FLETCHER32);
  H5Pclose(dcpl);
  H5Dclose(ds);
}

// Every zstd chunk ends with HDF5's Fletcher-32 trailer, checked by libhdf5 itself: one flipped bit in a stored
// chunk makes that image fail to read (instead of decoding to other pixels) and leaves the others readable.
TEST(Hdf5Sink, ADamagedChunkFailsToRead) {
  Hdf5Job job{.total = 10};
  TempDir dir;
  const std::string out = dir.file("one.h5");
  ASSERT_TRUE(test::job_run(job, out, {10}).is_ok());
  haddr_t address = 0;
  hsize_t size = 0;
  {
    auto file = hdf5::file_open_read(out);
    ASSERT_TRUE(file.is_ok());
    const hid_t ds = H5Dopen2(file->get(), "images", H5P_DEFAULT);
    const hsize_t offset[3] = {4, 0, 0};
    unsigned mask = 0;
    ASSERT_GE(H5Dget_chunk_info_by_coord(ds, offset, &mask, &address, &size), 0);
    H5Dclose(ds);
  }
  {
    std::fstream f(out, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(address + size / 2));
    const char byte = static_cast<char>(f.get() ^ 0x10);
    f.seekp(static_cast<std::streamoff>(address + size / 2));
    f.put(byte);
  }
  auto file = hdf5::file_open_read(out);
  ASSERT_TRUE(file.is_ok());
  const hid_t ds = H5Dopen2(file->get(), "images", H5P_DEFAULT);
  const hid_t space = H5Dget_space(ds);
  const hsize_t count[3] = {1, 16, 24};
  const hid_t mem = H5Screate_simple(3, count, nullptr);
  std::vector<uint8_t> image(16 * 24);
  hdf5::ErrorScope quiet;  // the failing read is expected
  for (hsize_t row : {3, 4, 5}) {
    const hsize_t start[3] = {row, 0, 0};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const herr_t rc = H5Dread(ds, H5T_NATIVE_UINT8, mem, space, H5P_DEFAULT, image.data());
    if (row == 4) {
      EXPECT_LT(rc, 0) << "the damaged image was read";
    } else {
      EXPECT_GE(rc, 0) << "image " << row;
      EXPECT_EQ(image, test::image_bytes(job, static_cast<int64_t>(row)));
    }
  }
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(ds);
}

TEST(Hdf5Sink, IdenticalRunsGiveIdenticalFiles) {
  Hdf5Job job{.total = 5000};
  TempDir dir;
  ASSERT_TRUE(test::job_run(job, dir.file("a.h5"), {1000}).is_ok());
  ASSERT_TRUE(test::job_run(job, dir.file("b.h5"), {77, 3001}).is_ok());  // other batch sizes, same bytes
  EXPECT_EQ(file_bytes(dir.file("a.h5")), file_bytes(dir.file("b.h5")));
  EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);  // no leaked HDF5 handles
}

// The same job a second later (a rebuild, or a run slowed by load): the same bytes. HDF5 stamps the superblock
// extension's object header with the time it was made; kiln clears it (hdf5::superblock_extension_times_clear).
// Before, runs that straddled a second differed there (25 of 48 runs with 16 copies at once on 2 cores).
TEST(Hdf5Sink, RunsInDifferentSecondsGiveIdenticalFiles) {
  Hdf5Job job{.total = 300};
  TempDir dir;
  ASSERT_TRUE(test::job_run(job, dir.file("a.h5"), {100}).is_ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_TRUE(test::job_run(job, dir.file("b.h5"), {100}).is_ok());
  EXPECT_TRUE(file_bytes(dir.file("a.h5")) == file_bytes(dir.file("b.h5")));
  auto contents = test::contents_read(dir.file("b.h5"));  // libhdf5 still reads it: the checksum matches
  ASSERT_TRUE(contents.is_ok()) << contents.status().to_string();
  test::contents_expect(*contents, job, 0, job.total);
}

TEST(Hdf5Sink, EmptyJobWritesAnEmptyDataset) {
  for (int64_t per_file : {int64_t{0}, int64_t{10}}) {
    Hdf5Job job{.images_per_file = per_file, .total = 0};
    TempDir dir;
    const std::string out = dir.file("empty.h5");
    Status s = test::job_run(job, out, {1});
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    auto contents = test::contents_read(out);
    ASSERT_TRUE(contents.is_ok()) << contents.status().to_string();
    test::contents_expect(*contents, job, 0, 0);
    EXPECT_TRUE(contents->attributes.complete);
  }
}

TEST(Hdf5Sink, RefusesExistingOutputWithoutFlags) {
  Hdf5Job job{.total = 100};
  TempDir dir;
  const std::string out = dir.file("demo.h5");
  ASSERT_TRUE(test::job_run(job, out, {50}).is_ok());
  auto sink = hdf5_sink_create(job.spec(out));
  ASSERT_TRUE(sink.is_ok());
  auto start = (*sink)->open(job.layout(), job.attributes());
  ASSERT_FALSE(start.is_ok());
  EXPECT_EQ(start.status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(start.status().message(), out + " exists (use --resume to continue or --overwrite to replace)");

  // Leftover parts alone also count as existing output.
  TempDir dir2;
  const std::string out2 = dir2.file("demo.h5");
  fs::create_directories(hdf5::parts_dir(out2));
  test::write_text_file(hdf5::part_path(out2, 0) + ".tmp", "junk");
  auto sink2 = hdf5_sink_create(job.spec(out2));
  auto start2 = (*sink2)->open(job.layout(), job.attributes());
  EXPECT_EQ(start2.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(start2.status().message().find("exists (use --resume"), std::string::npos);

  OutputSpec both = job.spec(out);
  both.resume = both.overwrite = true;
  auto sink3 = hdf5_sink_create(both);
  EXPECT_EQ((*sink3)->open(job.layout(), job.attributes()).status().code(), Errc::kInvalidArgument);
}

TEST(Hdf5Sink, OverwriteReplacesEverything) {
  Hdf5Job shards{.images_per_file = 30, .total = 100};
  TempDir dir;
  const std::string out = dir.file("demo.h5");
  ASSERT_TRUE(test::job_run(shards, out, {50}).is_ok());
  Hdf5Job single{.compression = Compression::kGzip, .total = 40};
  OutputSpec spec = single.spec(out);
  spec.overwrite = true;
  auto sink = hdf5_sink_create(spec);
  auto start = (*sink)->open(single.layout(), single.attributes());
  ASSERT_TRUE(start.is_ok()) << start.status().to_string();
  EXPECT_EQ(*start, 0);
  EXPECT_TRUE(files_in(dir.path()).empty());  // old VDS, manifest and shards are gone
  ASSERT_TRUE(test::job_write(**sink, single, 0, 40, {40}).is_ok());
  ASSERT_TRUE((*sink)->finish().is_ok());
  auto contents = test::contents_read(out);
  ASSERT_TRUE(contents.is_ok());
  test::contents_expect(*contents, single, 0, 40);
}

// Interrupted run (sink destroyed without finish, a stray .tmp left) + resume == uninterrupted run.
void resume_check(const Hdf5Job& job, int64_t crash_after, int64_t expected_resume, std::vector<int32_t> sizes) {
  TempDir dir;
  const std::string ref = dir.file("ref/demo.h5");
  ASSERT_TRUE(test::job_run(job, ref, sizes, "2024-01-01T00:00:00Z").is_ok());

  const std::string out = dir.file("run/demo.h5");
  {
    auto sink = hdf5_sink_create(job.spec(out));
    ASSERT_TRUE((*sink)->open(job.layout(), job.attributes("2024-05-05T00:00:00Z")).is_ok());
    Status s = test::job_write(**sink, job, 0, crash_after, sizes);
    ASSERT_TRUE(s.is_ok()) << s.to_string();
  }  // "crash": no finish()
  const std::string stray = job.images_per_file > 0 ? hdf5::shard_path(out, 7) + ".tmp"
                                                    : hdf5::part_path(out, 7) + ".tmp";
  test::write_text_file(stray, "partial garbage");
  test::write_text_file(out + ".tmp", "partial merge");

  auto sink = hdf5_sink_create(job.spec(out, /*resume=*/true));
  auto start = (*sink)->open(job.layout(), job.attributes("2024-06-06T00:00:00Z"));
  ASSERT_TRUE(start.is_ok()) << start.status().to_string();
  EXPECT_EQ(*start, expected_resume);
  EXPECT_FALSE(fs::exists(stray));
  EXPECT_FALSE(fs::exists(out + ".tmp"));
  if (expected_resume > 0) {
    EXPECT_GT((*sink)->bytes_written(), 0u);  // counts the kept files
  }
  Status s = test::job_write(**sink, job, *start, job.total, {999});
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  s = (*sink)->finish();
  ASSERT_TRUE(s.is_ok()) << s.to_string();

  auto a = test::contents_read(ref);
  auto b = test::contents_read(out);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  test::contents_expect(*b, job, 0, job.total);
  EXPECT_EQ(a->images, b->images);
  EXPECT_EQ(a->sequences, b->sequences);
  EXPECT_EQ(a->index, b->index);
  EXPECT_EQ(a->labels, b->labels);
  EXPECT_EQ(attributes_key(a->attributes), attributes_key(b->attributes));
  EXPECT_EQ(b->attributes.dataset.created_at, "2024-06-06T00:00:00Z");
  if (job.images_per_file > 0) {
    for (int64_t k = 0; k * job.images_per_file < job.total; ++k) {
      auto sa = test::contents_read(hdf5::shard_path(ref, k));
      auto sb = test::contents_read(hdf5::shard_path(out, k));
      ASSERT_TRUE(sa.is_ok() && sb.is_ok());
      EXPECT_EQ(sa->images, sb->images);
      EXPECT_EQ(attributes_key(sa->attributes), attributes_key(sb->attributes));
    }
  } else {
    EXPECT_FALSE(fs::exists(hdf5::parts_dir(out)));
  }
}

TEST(Hdf5Resume, SingleFileKeepsCompleteParts) {
  Hdf5Job job{.total = 10000};
  resume_check(job, 9000, 8192, {1500});  // parts 0 and 1 were committed, part 2 was in flight
}

TEST(Hdf5Resume, SingleFileBeforeTheFirstPart) {
  Hdf5Job job{.compression = Compression::kGzip, .total = 5000};
  resume_check(job, 3000, 0, {1000});
}

TEST(Hdf5Resume, ShardsKeepCompleteShards) {
  Hdf5Job job{.dtype = PixelType::kF32, .images_per_file = 300, .total = 2000, .has_labels = false};
  resume_check(job, 1000, 900, {250});
}

TEST(Hdf5Resume, AllPartsWrittenButNotMerged) {
  Hdf5Job job{.total = 8192};
  resume_check(job, 8192, 8192, {4096});
}

TEST(Hdf5Resume, FinishedSingleFileIsANoOp) {
  Hdf5Job job{.total = 300};
  TempDir dir;
  const std::string out = dir.file("demo.h5");
  ASSERT_TRUE(test::job_run(job, out, {100}).is_ok());
  const auto before = file_bytes(out);
  auto sink = hdf5_sink_create(job.spec(out, /*resume=*/true));
  auto start = (*sink)->open(job.layout(), job.attributes("2030-01-01T00:00:00Z"));
  ASSERT_TRUE(start.is_ok()) << start.status().to_string();
  EXPECT_EQ(*start, job.total);
  EXPECT_TRUE((*sink)->finish().is_ok());
  EXPECT_EQ(file_bytes(out), before);
}

TEST(Hdf5Resume, FinishedShardsResumeAtTheEnd) {
  Hdf5Job job{.images_per_file = 100, .total = 300};
  TempDir dir;
  const std::string out = dir.file("demo.h5");
  ASSERT_TRUE(test::job_run(job, out, {100}).is_ok());
  auto sink = hdf5_sink_create(job.spec(out, /*resume=*/true));
  auto start = (*sink)->open(job.layout(), job.attributes());
  ASSERT_TRUE(start.is_ok()) << start.status().to_string();
  EXPECT_EQ(*start, job.total);
  ASSERT_TRUE((*sink)->finish().is_ok());
  auto contents = test::contents_read(out);
  ASSERT_TRUE(contents.is_ok());
  test::contents_expect(*contents, job, 0, job.total);
}

TEST(Hdf5Resume, RefusesDifferentSettings) {
  Hdf5Job job{.total = 10000};
  TempDir dir;
  const std::string out = dir.file("demo.h5");
  {
    auto sink = hdf5_sink_create(job.spec(out));
    ASSERT_TRUE((*sink)->open(job.layout(), job.attributes()).is_ok());
    ASSERT_TRUE(test::job_write(**sink, job, 0, 5000, {5000}).is_ok());
  }
  auto try_resume = [&](const Hdf5Job& other) {
    auto sink = hdf5_sink_create(other.spec(out, /*resume=*/true));
    return (*sink)->open(other.layout(), other.attributes()).status();
  };
  Hdf5Job stride = job;
  stride.stride = 2;
  Status s = try_resume(stride);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find("different settings"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("stride"), std::string::npos) << s.message();

  Hdf5Job gzip = job;
  gzip.compression = Compression::kGzip;
  s = try_resume(gzip);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find("compression"), std::string::npos) << s.message();

  Hdf5Job f32 = job;
  f32.dtype = PixelType::kF32;
  EXPECT_EQ(try_resume(f32).code(), Errc::kInvalidArgument);

  // Switching to shards over a finished single file is refused too (nothing is deleted).
  Hdf5Job single{.total = 100};
  const std::string done = dir.file("done.h5");
  ASSERT_TRUE(test::job_run(single, done, {100}).is_ok());
  Hdf5Job sharded = single;
  sharded.images_per_file = 50;
  auto sink = hdf5_sink_create(sharded.spec(done, /*resume=*/true));
  s = (*sink)->open(sharded.layout(), sharded.attributes()).status();
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find("images_per_file"), std::string::npos) << s.message();
  EXPECT_TRUE(fs::exists(done));

  // created_at alone does not matter; the original job still resumes.
  s = try_resume(job);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
}

TEST(Hdf5Sink, RejectsBatchesOutOfOrderOrMalformed) {
  Hdf5Job job{.total = 20};
  TempDir dir;
  auto sink = hdf5_sink_create(job.spec(dir.file("x.h5")));
  ASSERT_TRUE((*sink)->open(job.layout(), job.attributes()).is_ok());
  EncodedBatch batch;
  ASSERT_TRUE(test::batch_make(**sink, job, 5, 5, 1, &batch).is_ok());
  EXPECT_EQ((*sink)->write(batch).code(), Errc::kInvalidArgument);  // starts at 5, expected 0
  ASSERT_TRUE(test::batch_make(**sink, job, 0, 5, 1, &batch).is_ok());
  batch.index.pop_back();
  EXPECT_EQ((*sink)->write(batch).code(), Errc::kInvalidArgument);
  ASSERT_TRUE(test::batch_make(**sink, job, 0, 5, 1, &batch).is_ok());
  EXPECT_TRUE((*sink)->write(batch).is_ok());
  EXPECT_EQ((*sink)->finish().code(), Errc::kInvalidArgument);  // 5 of 20
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Manual timing (--gtest_also_run_disabled_tests): 800x500 chart-like u8 images, zstd-1. Encoding runs up front
// on one thread, so the writer-thread rate (H5Dwrite_chunk + small datasets + commits + merge) is measured alone.
TEST(Hdf5Perf, DISABLED_WriterThroughput) {
  Hdf5Job job{.total = 10000, .width = 800, .height = 500, .seq_len = 64};
  TempDir dir;
  for (int64_t per_file : {int64_t{0}, int64_t{2500}}) {
    job.images_per_file = per_file;
    const std::string out = dir.file(per_file == 0 ? "perf.h5" : "perf_shards.h5");
    auto sink = hdf5_sink_create(job.spec(out));
    ASSERT_TRUE((*sink)->open(job.layout(), job.attributes()).is_ok());
    auto encoder = (*sink)->make_encoder();
    std::vector<uint8_t> pixels(800 * 500);
    std::vector<EncodedBatch> batches;
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t first = 0; first < job.total; first += 256) {
      EncodedBatch batch;
      batch.clear();
      batch.first = first;
      batch.count = static_cast<int32_t>(std::min<int64_t>(256, job.total - first));
      for (int32_t j = 0; j < batch.count; ++j) {
        std::fill(pixels.begin(), pixels.end(), 255);
        const int64_t i = first + j;
        for (int x = 0; x < 800; ++x) {  // a 2-px polyline, different per image
          const int y = 250 + static_cast<int>(200.0 * std::sin((x + i * 13) * 0.02) * std::cos(x * 0.003 + i));
          for (int d = 0; d < 2; ++d) pixels[static_cast<size_t>(std::clamp(y + d, 0, 499) * 800 + x)] = 0;
        }
        ImageView view{pixels.data(), 800, 500, 1, 800, PixelType::kU8};
        ASSERT_TRUE(encoder->encode(view, batch.bytes).is_ok());
        batch.offsets.push_back(batch.bytes.size());
        batch.sequences.insert(batch.sequences.end(), static_cast<size_t>(job.seq_len), 1.0f);
        batch.index.push_back(i);
        batch.labels.push_back(0);
      }
      batches.push_back(std::move(batch));
    }
    const auto t1 = std::chrono::steady_clock::now();
    for (const auto& batch : batches) ASSERT_TRUE((*sink)->write(batch).is_ok());
    const auto t2 = std::chrono::steady_clock::now();
    ASSERT_TRUE((*sink)->finish().is_ok());
    const auto t3 = std::chrono::steady_clock::now();
    const double enc = std::chrono::duration<double>(t1 - t0).count();
    const double wr = std::chrono::duration<double>(t2 - t1).count();
    const double fin = std::chrono::duration<double>(t3 - t2).count();
    std::printf("%s: encode %.0f img/s (1 thread), write %.0f img/s, finish %.3f s, %.1f bytes/img (ratio %.1fx)\n",
                (*sink)->describe().c_str(), job.total / enc, job.total / wr, fin,
                static_cast<double>((*sink)->bytes_written()) / job.total,
                400000.0 * job.total / static_cast<double>((*sink)->bytes_written()));
  }
}

}  // namespace
}  // namespace kiln
