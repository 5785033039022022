// A single-file run writes its images once, into the draft; its parts record where they lie. Checked here: the
// records match the draft's own chunk index, damaged draft bytes fail the part's check, and resumes chain drafts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "apps/render/hdf5_test_util.h"
#include "common/test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using test::Hdf5Job;
using test::TempDir;

// Writes images [0, stop) and drops the sink without finish(), as a killed run leaves things.
void interrupted_run(const Hdf5Job& job, const std::string& out, int64_t start, int64_t stop, bool resume) {
  auto sink = hdf5_sink_create(job.spec(out, resume));
  ASSERT_TRUE(sink.is_ok()) << sink.status().to_string();
  auto first = (*sink)->open(job.layout(), job.attributes());
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  ASSERT_EQ(*first, start);
  const Status s = test::job_write(**sink, job, start, stop, {700});
  ASSERT_TRUE(s.is_ok()) << s.to_string();
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct PartRefs {
  hdf5::FileAttributes attributes;
  std::vector<uint64_t> refs;  // {address, size, filter mask} per row
};

PartRefs part_refs_read(const std::string& part) {
  PartRefs p;
  auto file = hdf5::file_open_read(part);
  EXPECT_TRUE(file.is_ok()) << file.status().to_string();
  if (!file.is_ok()) return p;
  auto attributes = hdf5::attributes_read(file->get());
  EXPECT_TRUE(attributes.is_ok());
  p.attributes = *attributes;
  auto refs = hdf5::image_refs_read(file->get(), p.attributes.count);
  EXPECT_TRUE(refs.is_ok()) << refs.status().to_string();
  if (refs.is_ok()) p.refs = *refs;
  return p;
}

TEST(Hdf5Draft, PartsRecordWhereTheirImagesLieInTheDraft) {
  // Parts of 4096, 4096, 808; images whose chunks are larger than libhdf5's 2 KiB small-data blocks.
  const Hdf5Job job{.total = 9000, .width = 64, .height = 48};
  TempDir dir;
  const std::string out = dir.file("demo.h5");
  interrupted_run(job, out, 0, 8500, false);
  EXPECT_EQ(names_in(hdf5::parts_dir(out)),
            (std::vector<std::string>{"draft_0000.h5", "part_00000.h5", "part_00001.h5"}));

  // The abandoned draft was closed by libhdf5, so here its own chunk index can be read to compare with.
  auto draft = hdf5::file_open_read(hdf5::draft_path(out, 0));
  ASSERT_TRUE(draft.is_ok()) << draft.status().to_string();
  hdf5::Handle images = hdf5::dataset_handle(H5Dopen2(draft->get(), "images", H5P_DEFAULT));
  ASSERT_TRUE(images.valid());
  for (int64_t k = 0; k < 2; ++k) {
    const PartRefs part = part_refs_read(hdf5::part_path(out, k));
    EXPECT_EQ(part.attributes.images_file, "draft_0000.h5");
    ASSERT_EQ(part.refs.size(), size_t{4096} * 3);
    for (int64_t r = 0; r < 4096; r += 97) {
      const hsize_t offset[3] = {static_cast<hsize_t>(k * 4096 + r), 0, 0};
      unsigned mask = 99;
      haddr_t address = HADDR_UNDEF;
      hsize_t size = 0;
      ASSERT_GE(H5Dget_chunk_info_by_coord(images.get(), offset, &mask, &address, &size), 0);
      const uint64_t* ref = part.refs.data() + static_cast<size_t>(r) * 3;
      EXPECT_EQ(ref[0], address) << "part " << k << " row " << r;
      EXPECT_EQ(ref[1], size) << "part " << k << " row " << r;
      EXPECT_EQ(ref[2], mask);
    }
    EXPECT_TRUE(hdf5::checksum_verify(hdf5::part_path(out, k)).is_ok());
    auto summary = hdf5::file_summary_read(hdf5::part_path(out, k));
    ASSERT_TRUE(summary.is_ok());
    uint64_t bytes = 0;
    for (size_t r = 1; r < part.refs.size(); r += 3) bytes += part.refs[r];
    EXPECT_EQ(summary->image_bytes, bytes);
  }
}

TEST(Hdf5Draft, DamagedDraftBytesFailTheirPartsCheck) {
  const Hdf5Job job{.total = 9000};
  TempDir dir;
  const std::string out = dir.file("demo.h5");
  interrupted_run(job, out, 0, 8500, false);
  const PartRefs part = part_refs_read(hdf5::part_path(out, 1));
  ASSERT_FALSE(part.refs.empty());
  {
    std::fstream draft(hdf5::draft_path(out, 0), std::ios::in | std::ios::out | std::ios::binary);
    const auto at = static_cast<std::streamoff>(part.refs[300 * 3] + part.refs[300 * 3 + 1] / 2);
    draft.seekg(at);
    const char byte = static_cast<char>(draft.get() ^ 0x10);
    draft.seekp(at);
    draft.put(byte);
  }
  EXPECT_TRUE(hdf5::checksum_verify(hdf5::part_path(out, 0)).is_ok());
  const Status damaged = hdf5::checksum_verify(hdf5::part_path(out, 1));
  EXPECT_EQ(damaged.code(), Errc::kIoError);
  EXPECT_NE(damaged.message().find("part_00001.h5 is damaged: images checksum"), std::string::npos)
      << damaged.message();

  // A part whose record of an image points past the end of the draft: refused before anything is read.
  {
    hdf5::Handle file = hdf5::file_handle(H5Fopen(hdf5::part_path(out, 1).c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    hdf5::Handle refs = hdf5::dataset_handle(H5Dopen2(file.get(), "image_refs", H5P_DEFAULT));
    ASSERT_TRUE(refs.valid());
    std::vector<uint64_t> values(part.refs);
    values[7 * 3 + 1] = uint64_t{3} << 30;  // image 7: 3 GiB
    ASSERT_GE(H5Dwrite(refs.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  }
  const Status past_end = hdf5::checksum_verify(hdf5::part_path(out, 1));
  EXPECT_NE(past_end.message().find("part_00001.h5: image 7 lies past the end of draft_0000.h5"), std::string::npos)
      << past_end.message();

  // A part naming a file elsewhere: refused before anything is opened.
  {
    hdf5::Handle file = hdf5::file_handle(H5Fopen(hdf5::part_path(out, 1).c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    ASSERT_GE(H5Adelete(file.get(), "images_file"), 0);
    const std::string elsewhere = "../draft_0000.h5";
    hdf5::Handle type = hdf5::type_handle(H5Tcopy(H5T_C_S1));
    ASSERT_GE(H5Tset_size(type.get(), elsewhere.size()), 0);
    hdf5::Handle space = hdf5::space_handle(H5Screate(H5S_SCALAR));
    hdf5::Handle attr = hdf5::attribute_handle(
        H5Acreate2(file.get(), "images_file", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
    ASSERT_GE(H5Awrite(attr.get(), type.get(), elsewhere.c_str()), 0);
  }
  const Status elsewhere = hdf5::checksum_verify(hdf5::part_path(out, 1));
  EXPECT_NE(elsewhere.message().find("images_file '../draft_0000.h5' does not name a draft beside it"),
            std::string::npos)
      << elsewhere.message();

  // A draft that is gone: the parts pointing into it are not kept.
  fs::remove(hdf5::draft_path(out, 0));
  const Status missing = hdf5::checksum_verify(hdf5::part_path(out, 0));
  EXPECT_NE(missing.message().find("draft_0000.h5 (the images of"), std::string::npos) << missing.message();
  auto sink = hdf5_sink_create(job.spec(out, true));
  auto start = (*sink)->open(job.layout(), job.attributes());
  ASSERT_TRUE(start.is_ok()) << start.status().to_string();
  EXPECT_EQ(*start, 0);
}

// Each resume starts the next draft with copies of the kept parts' images and points those parts at it: one draft
// is left, however often a run was resumed.
TEST(Hdf5Draft, ResumesMoveThePartsToOneNewDraftAndEndInTheJobsOutput) {
  const Hdf5Job job{.total = 14000};  // parts of 4096 x 3 and 1712
  TempDir dir;
  const std::string out = dir.file("run/demo.h5");
  interrupted_run(job, out, 0, 5000, false);                               // part 0 in draft 0
  test::write_text_file(hdf5::draft_path(out, 3), "no part points here");  // dropped by the resume
  const std::string part0 = hdf5::part_path(out, 0);
  const PartRefs before = part_refs_read(part0);
  interrupted_run(job, out, 4096, 12800, true);  // part 0 moved to draft 1, parts 1 and 2 written there
  EXPECT_EQ(names_in(hdf5::parts_dir(out)),
            (std::vector<std::string>{"draft_0001.h5", "part_00000.h5", "part_00001.h5", "part_00002.h5"}));
  const PartRefs moved = part_refs_read(part0);
  EXPECT_EQ(moved.attributes.images_file, "draft_0001.h5");
  EXPECT_EQ(moved.attributes.checksum, before.attributes.checksum);
  EXPECT_EQ(moved.refs.size(), before.refs.size());
  EXPECT_TRUE(hdf5::checksum_verify(part0).is_ok());  // its images read from draft 1 (draft 0 is gone)
  EXPECT_EQ(part_refs_read(hdf5::part_path(out, 2)).attributes.images_file, "draft_0001.h5");

  auto sink = hdf5_sink_create(job.spec(out, true));
  auto start = (*sink)->open(job.layout(), job.attributes());
  ASSERT_TRUE(start.is_ok()) << start.status().to_string();
  ASSERT_EQ(*start, 3 * 4096);
  ASSERT_TRUE(test::job_write(**sink, job, *start, job.total, {700}).is_ok());
  const Status finished = (*sink)->finish();
  ASSERT_TRUE(finished.is_ok()) << finished.to_string();
  EXPECT_FALSE(fs::exists(hdf5::parts_dir(out)));

  auto contents = test::contents_read(out);  // every image, sequence, index and label of the job, in order
  ASSERT_TRUE(contents.is_ok()) << contents.status().to_string();
  test::contents_expect(*contents, job, 0, job.total);
  EXPECT_TRUE(hdf5::checksum_verify(out).is_ok());
}

}  // namespace
}  // namespace kiln
