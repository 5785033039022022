// hdf5::superblock_extension_times_clear on files it must not touch: not HDF5, or an extension header whose checksum
// does not match (it refuses and writes nothing); and on a real file, which libhdf5 still opens afterwards.
#include <gtest/gtest.h>
#include <hdf5.h>

#include "common/test_util.h"
#include "io/hdf5_times.h"

namespace kiln {
namespace {

// A file with a superblock extension (a non-default file space strategy puts one there).
void file_with_extension(const std::string& path) {
  const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  ASSERT_GE(H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, 0, 1), 0);
  ASSERT_GE(H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110), 0);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, fapl);
  ASSERT_GE(file, 0);
  H5Fclose(file);
  H5Pclose(fapl);
  H5Pclose(fcpl);
}

TEST(Hdf5Times, ClearedTimesLeaveAFileLibhdf5Opens) {
  const test::TempDir dir;
  const std::string path = dir.file("x.h5");
  file_with_extension(path);
  ASSERT_TRUE(hdf5::superblock_extension_times_clear(path).is_ok());
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);  // checks the header's checksum
  EXPECT_GE(file, 0);
  if (file >= 0) H5Fclose(file);
  EXPECT_TRUE(hdf5::superblock_extension_times_clear(path).is_ok());  // again: nothing left to change
}

TEST(Hdf5Times, ANonHdf5FileOrADamagedHeaderIsRefusedAndLeftAsItWas) {
  const test::TempDir dir;
  test::write_text_file(dir.file("text.h5"), "not an HDF5 file at all, but long enough for a superblock .......");
  EXPECT_EQ(hdf5::superblock_extension_times_clear(dir.file("text.h5")).code(), Errc::kUnsupportedFormat);
  EXPECT_EQ(hdf5::superblock_extension_times_clear(dir.file("absent.h5")).code(), Errc::kIoError);

  const std::string path = dir.file("damaged.h5");
  file_with_extension(path);
  std::string bytes = test::read_file(path);
  const size_t at = bytes.find("OHDR");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 30] = static_cast<char>(bytes[at + 30] ^ 0x5a);  // inside the extension's messages
  test::write_text_file(path, bytes);
  EXPECT_EQ(hdf5::superblock_extension_times_clear(path).code(), Errc::kUnsupportedFormat);
  EXPECT_EQ(test::read_file(path), bytes);
}

}  // namespace
}  // namespace kiln
