// kiln's Fletcher-32 trailer equals what HDF5's own fletcher32 filter appends (odd and even sizes, more than one
// 360-word block), so libhdf5 accepts the chunks kiln writes directly.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <random>
#include <vector>

#include "common/test_util.h"
#include "io/fletcher32.h"

namespace kiln {
namespace {

TEST(Hdf5Fletcher32, TrailerEqualsWhatHdf5Appends) {
  test::TempDir dir;
  const std::string path = dir.file("f.h5");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  std::mt19937 rng(5);
  for (hsize_t size : {1, 2, 3, 719, 720, 721, 5000, 65537}) {
    std::vector<uint8_t> data(size);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    const hid_t space = H5Screate_simple(1, &size, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    ASSERT_GE(H5Pset_chunk(dcpl, 1, &size), 0);
    ASSERT_GE(H5Pset_fletcher32(dcpl), 0);
    const std::string name = "d" + std::to_string(size);
    const hid_t ds = H5Dcreate2(file, name.c_str(), H5T_NATIVE_UINT8, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
    ASSERT_GE(H5Dflush(ds), 0);
    const hsize_t offset[1] = {0};
    hsize_t stored = 0;
    ASSERT_GE(H5Dget_chunk_storage_size(ds, offset, &stored), 0);
    ASSERT_EQ(stored, size + 4);
    std::vector<uint8_t> chunk(stored);
    uint32_t mask = 0;
    ASSERT_GE(H5Dread_chunk(ds, H5P_DEFAULT, offset, &mask, chunk.data()), 0);
    std::vector<uint8_t> ours(data);
    hdf5_fletcher32_append(ours, 0);
    EXPECT_EQ(ours, chunk) << "size " << size;
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(space);
  }
  H5Fclose(file);
}

}  // namespace
}  // namespace kiln
