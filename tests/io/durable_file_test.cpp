// Durable files: commits leave the old file or the new one and no temporary files; errors name the path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/test_util.h"
#include "io/durable_file.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(DurableFile, WriteAtomicReplacesWholeAndLeavesNoTemporaryFile) {
  test::TempDir dir;
  const std::string path = dir.file("out.json");
  for (TempName temp : {TempName::kUnique, TempName::kFixed}) {
    ASSERT_TRUE(file_write_atomic(path, std::string("first"), temp).is_ok());
    ASSERT_TRUE(file_write_atomic(path, std::string("second, longer"), temp).is_ok());
    EXPECT_EQ(test::read_file(path), "second, longer");
    EXPECT_EQ(entries(dir.path()), 1u);
  }
}

TEST(DurableFile, FailedWriteKeepsTheOldFile) {
  test::TempDir dir;
  const std::string path = dir.file("keep.txt");
  ASSERT_TRUE(file_write_atomic(path, std::string("old")).is_ok());
  // A folder where the fixed temporary file would go makes the write fail before anything is renamed.
  fs::create_directory(path + ".tmp");
  const Status s = file_write_atomic(path, std::string("new"), TempName::kFixed);
  EXPECT_EQ(s.code(), Errc::kIoError);
  EXPECT_NE(s.message().find("keep.txt.tmp"), std::string::npos) << s.message();
  EXPECT_EQ(test::read_file(path), "old");
}

TEST(DurableFile, TempFileIsUniqueAndCommitRenamesIt) {
  test::TempDir dir;
  const std::string path = dir.file("a.npy");
  auto one = temp_file_create(path);
  auto two = temp_file_create(path);
  ASSERT_TRUE(one.is_ok() && two.is_ok());
  EXPECT_NE(one.value(), two.value());
  EXPECT_EQ(fs::path(one.value()).parent_path(), dir.path());
  test::write_text_file(one.value(), "data");
  ASSERT_TRUE(file_commit(one.value(), path).is_ok());
  EXPECT_FALSE(fs::exists(one.value()));
  EXPECT_EQ(test::read_file(path), "data");
  fs::remove(two.value());
}

TEST(DurableFile, TempFilesRemoveTakesOnlyKilnTemporaries) {
  test::TempDir dir;
  const auto put = [&](const std::string& name) { std::ofstream(dir.file(name)) << "x"; };
  for (const char* name : {"b.npy", ".b.npy.tmp.Ab12Cd", ".c.npy.tmp.Ef34Gh", ".b.npy.tmp.toolong", "b.npy.tmp.Ab12Cd",
                           ".b.npy.tmp", "keep.txt"}) {
    put(name);
  }
  temp_files_remove(dir.path().string(), "b.npy");
  EXPECT_FALSE(std::filesystem::exists(dir.file(".b.npy.tmp.Ab12Cd")));
  for (const char* kept : {"b.npy", ".c.npy.tmp.Ef34Gh", ".b.npy.tmp.toolong", "b.npy.tmp.Ab12Cd", ".b.npy.tmp",
                           "keep.txt"}) {
    EXPECT_TRUE(std::filesystem::exists(dir.file(kept))) << kept;
  }
  temp_files_remove(dir.path().string());  // every one
  EXPECT_FALSE(std::filesystem::exists(dir.file(".c.npy.tmp.Ef34Gh")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("keep.txt")));
}

TEST(DurableFile, CopyAndReadAll) {
  test::TempDir dir;
  test::write_text_file(dir.file("src.bin"), std::string("\x00\x01\x02zz", 5));
  ASSERT_TRUE(file_copy_atomic(dir.file("src.bin"), dir.file("dst.bin")).is_ok());
  auto bytes = file_read_all(dir.file("dst.bin"), 5);
  ASSERT_TRUE(bytes.is_ok());
  EXPECT_EQ(bytes.value().size(), 5u);
  EXPECT_EQ(file_read_all(dir.file("dst.bin"), 4).status().code(), Errc::kIoError);  // over the limit
  EXPECT_EQ(file_read_all(dir.path().string(), 100).status().code(), Errc::kIoError);  // not a regular file
  const Status missing = file_read_text(dir.file("missing")).status();
  EXPECT_EQ(missing.code(), Errc::kIoError);
  EXPECT_NE(missing.message().find("missing: cannot open"), std::string::npos) << missing.message();
}

TEST(DurableFile, PathParent) {
  EXPECT_EQ(path_parent("x.h5"), ".");
  EXPECT_EQ(path_parent("a/b/x.h5"), "a/b");
}

}  // namespace
}  // namespace kiln
