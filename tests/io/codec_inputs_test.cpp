// Collecting inputs (files, folders, list files) and the crash-safe tensor writer (.npy / .h5).
#include <gtest/gtest.h>
#include <hdf5.h>

#include <chrono>
#include <cstring>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "common/test_util.h"
#include "io/image_inputs.h"
#include "io/tensor_writer.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x";
}

int count_entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(CodecInputs, FoldersAreRecursiveSortedAndFiltered) {
  test::TempDir dir;
  const fs::path root = dir.path() / "imgs";
  touch(root / "b.png");
  touch(root / "a.JPG");
  touch(root / "sub" / "c.jpeg");
  touch(root / "sub" / "deeper" / "d.png");
  touch(root / "notes.txt");
  touch(root / "e.gif");
  touch(root / "f.svg");
  auto files = image_inputs_folder(root.string());
  ASSERT_TRUE(files.is_ok());
  const std::vector<std::string> want = {(root / "a.JPG").string(), (root / "b.png").string(),
                                         (root / "e.gif").string(), (root / "sub" / "c.jpeg").string(),
                                         (root / "sub" / "deeper" / "d.png").string()};
  EXPECT_EQ(files.value(), want);
  EXPECT_FALSE(image_inputs_folder((root / "nope").string()).is_ok());
}

TEST(CodecInputs, ListFilesAndArgumentsExpandInOrder) {
  test::TempDir dir;
  touch(dir.path() / "f" / "x.png");
  touch(dir.path() / "f" / "y.png");
  touch(dir.path() / "one.jpg");
  test::write_text_file(dir.file("list.txt"),
                        "# a comment\n\none.jpg   \n  f  # a folder\n/abs/path.png\nmissing.png\n");
  auto listed = image_inputs_list(dir.file("list.txt"));
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  const std::vector<std::string> want = {dir.file("one.jpg"), (dir.path() / "f" / "x.png").string(),
                                         (dir.path() / "f" / "y.png").string(), "/abs/path.png",
                                         dir.file("missing.png")};
  EXPECT_EQ(listed.value(), want);

  auto all = image_inputs_collect({dir.file("one.jpg"), "@" + dir.file("list.txt"), (dir.path() / "f").string(),
                                   "not-there.png"});
  ASSERT_TRUE(all.is_ok());
  ASSERT_EQ(all->size(), 1u + 5u + 2u + 1u);
  EXPECT_EQ(all->front(), dir.file("one.jpg"));
  EXPECT_EQ(all->back(), "not-there.png");  // reported later, when decoding fails

  auto bad = image_inputs_collect({"@" + dir.file("no-list.txt")});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Errc::kIoError);
  EXPECT_TRUE(image_path_is_image("a/b.JpEg"));
  EXPECT_TRUE(image_path_is_image("a/b.webp"));
  EXPECT_FALSE(image_path_is_image("a/b.svg"));
}

// Found by fuzz_image_list: "..\0x.jpg" was read as "..", a folder search far outside what the list meant.
TEST(CodecInputs, AListLineWithANulByteIsAnError) {
  test::TempDir dir;
  test::write_text_file(dir.file("list.txt"), std::string("one.jpg\n..\0crawl/x.jpg\n", 23));
  auto listed = image_inputs_list(dir.file("list.txt"));
  ASSERT_FALSE(listed.is_ok());
  EXPECT_EQ(listed.status().message(), dir.file("list.txt") + ":2: a path cannot hold a NUL byte");
}

TEST(CodecTensorWriter, NpyF32AndF16WithFinalCount) {
  test::TempDir dir;
  for (PixelType dtype : {PixelType::kF32, PixelType::kF16}) {
    const std::string path = dir.file(dtype == PixelType::kF32 ? "t32.npy" : "t16.npy");
    TensorWriter w;
    ASSERT_TRUE(w.open(path, {2, 3, 4}, dtype).is_ok());
    EXPECT_FALSE(fs::exists(path));  // nothing under the final name until finish()
    const size_t item = w.item_bytes();
    EXPECT_EQ(item, 24 * pixel_type_size(dtype));
    std::vector<uint8_t> data(item * 3);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
    ASSERT_TRUE(w.append(data.data(), 1).is_ok());
    ASSERT_TRUE(w.append(data.data() + item, 2).is_ok());
    EXPECT_EQ(w.count(), 3);
    ASSERT_TRUE(w.finish({"a", "b", "c"}).is_ok());
    const std::string bytes = test::read_file(path);
    ASSERT_EQ(bytes.size(), 256 + data.size());
    EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
    const std::string header = bytes.substr(10, 246);
    EXPECT_NE(header.find(dtype == PixelType::kF32 ? "'<f4'" : "'<f2'"), std::string::npos) << header;
    EXPECT_NE(header.find("'shape': (3, 2, 3, 4)"), std::string::npos) << header;
    EXPECT_EQ(header.back(), '\n');
    EXPECT_EQ(std::memcmp(bytes.data() + 256, data.data(), data.size()), 0);
    const fs::path names = fs::path(path).replace_extension(".paths.txt");
    EXPECT_EQ(test::read_file(names.string()), "a\nb\nc\n");
  }
  EXPECT_EQ(count_entries(dir.path()), 4);  // no temporary files left
}

// No object of the file stores when it was made: the same writes a second later give the same bytes (outputs named
// like paths, whose groups kiln creates, included).
TEST(CodecTensorWriter, Hdf5WrittenInDifferentSecondsIsTheSameBytes) {
  test::TempDir dir;
  const std::vector<float> data(8, 0.25f);
  for (const char* name : {"a.h5", "b.h5"}) {
    TensorWriter w;
    ASSERT_TRUE(w.open_arrays(dir.file(name), {{"/model/out", {2, 2}}, {"scores", {2, 2}}}, PixelType::kF32).is_ok());
    ASSERT_TRUE(w.append(std::vector<const void*>{data.data(), data.data()}, 2).is_ok());
    ASSERT_TRUE(w.finish({"x.png", "y.png"}).is_ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  }
  EXPECT_TRUE(test::read_file(dir.file("a.h5")) == test::read_file(dir.file("b.h5")));
}

TEST(CodecTensorWriter, Hdf5DatasetPathsAndAttributes) {
  test::TempDir dir;
  const std::string path = dir.file("t.h5");
  TensorWriter w;
  ASSERT_TRUE(w.open(path, {3, 2, 2}, PixelType::kF32).is_ok());
  std::vector<float> data(12 * 2);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.5f;
  ASSERT_TRUE(w.append(data.data(), 2).is_ok());
  TensorAttributes attrs;
  attrs.text.push_back({"layout", "chw"});
  attrs.numbers.push_back({"mean", {0.1, 0.2, 0.3}});
  ASSERT_TRUE(w.finish({"p/one.png", "two.jpg"}, attrs).is_ok());

  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t ds = H5Dopen2(f, "images", H5P_DEFAULT);
  ASSERT_GE(ds, 0);
  hid_t space = H5Dget_space(ds);
  hsize_t dims[4] = {};
  ASSERT_EQ(H5Sget_simple_extent_ndims(space), 4);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  EXPECT_EQ(dims[0], 2u);
  EXPECT_EQ(dims[1], 3u);
  std::vector<float> back(data.size());
  ASSERT_GE(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
  EXPECT_EQ(back, data);
  H5Sclose(space);
  H5Dclose(ds);
  EXPECT_GT(H5Lexists(f, "paths", H5P_DEFAULT), 0);
  EXPECT_GT(H5Aexists(f, "layout"), 0);
  EXPECT_GT(H5Aexists(f, "mean"), 0);
  H5Fclose(f);
  EXPECT_EQ(count_entries(dir.path()), 1);
}

TEST(CodecTensorWriter, AbandonLeavesNothingAndBadArgumentsAreRejected) {
  test::TempDir dir;
  {
    TensorWriter w;
    ASSERT_TRUE(w.open(dir.file("x.h5"), {1, 2, 2}, PixelType::kF16).is_ok());
    std::vector<uint16_t> data(4, 0x3C00);
    ASSERT_TRUE(w.append(data.data(), 1).is_ok());
    // Destroyed without finish(): like a crash before commit.
  }
  {
    TensorWriter w;
    ASSERT_TRUE(w.open(dir.file("y.npy"), {1, 2, 2}, PixelType::kF32).is_ok());
    w.abandon();
    EXPECT_FALSE(w.finish({}).is_ok());
  }
  EXPECT_EQ(count_entries(dir.path()), 0);
  TensorWriter w;
  EXPECT_EQ(w.open(dir.file("z.txt"), {1}, PixelType::kF32).code(), Errc::kInvalidArgument);
  EXPECT_EQ(w.open(dir.file("z.npy"), {1}, PixelType::kU8).code(), Errc::kInvalidArgument);
  EXPECT_EQ(w.open(dir.file("z.npy"), {0, 2}, PixelType::kF32).code(), Errc::kInvalidArgument);
  EXPECT_EQ(w.append(nullptr, 1).code(), Errc::kInvalidArgument);
  ASSERT_TRUE(w.open(dir.file("z.npy"), {2}, PixelType::kF32).is_ok());
  float v[2] = {1, 2};
  ASSERT_TRUE(w.append(v, 1).is_ok());
  EXPECT_EQ(w.finish({"a", "b"}).code(), Errc::kInvalidArgument);  // 2 names for 1 item
  EXPECT_EQ(w.open(dir.path().string() + "/no/such/dir/z.npy", {2}, PixelType::kF32).code(), Errc::kIoError);
}

TEST(CodecTensorWriter, SeveralArraysRankOneItemsAndPathLikeNamesInHdf5) {
  test::TempDir dir;
  TensorWriter w;
  const std::string path = dir.file("out.h5");
  ASSERT_TRUE(w.open_arrays(path, {{"/model/score", {}}, {"boxes", {2, 4}}}, PixelType::kF32).is_ok());
  const float score[1] = {0.5f};
  std::vector<float> boxes(8, 1.0f);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(w.append({score, boxes.data()}, 1).is_ok());
  EXPECT_EQ(w.append(score, 1).code(), Errc::kInvalidArgument) << "two arrays need two pointers";
  ASSERT_TRUE(w.finish({"a", "b", "c"}).is_ok());
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const auto& [name, rank, rows] : {std::tuple{"/model/score", 1, 3}, std::tuple{"boxes", 3, 3}}) {
    const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    ASSERT_GE(ds, 0) << name;
    const hid_t space = H5Dget_space(ds);
    hsize_t dims[4] = {};
    EXPECT_EQ(H5Sget_simple_extent_dims(space, dims, nullptr), rank) << name;
    EXPECT_EQ(dims[0], static_cast<hsize_t>(rows));
    H5Sclose(space);
    H5Dclose(ds);
  }
  H5Fclose(file);
  TensorWriter npy;
  EXPECT_EQ(npy.open_arrays(dir.file("two.npy"), {{"a", {1}}, {"b", {1}}}, PixelType::kF32).code(),
            Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
