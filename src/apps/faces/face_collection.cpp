// Reading a `kiln faces` output (.h5) back for search: the embeddings, boxes and each row's image path.
#include <hdf5.h>

#include "apps/faces/faces_rows.h"
#include "io/hdf5_handle.h"
#include "kiln/apps/face_search.h"
#include "kiln/apps/faces.h"

namespace kiln {

namespace {

// The float rows of dataset `name`, which must be (count, width) or (count,) for width 1.
Status rows_read(hid_t file, const std::string& path, const char* name, int64_t width, int64_t* count,
                 std::vector<float>* out) {
  hdf5::Handle ds = hdf5::dataset_handle(H5Dopen2(file, name, H5P_DEFAULT));
  if (!ds.valid()) return hdf5::error(path + ": no dataset '" + name + "' (not a kiln faces output?)");
  hdf5::Handle space = hdf5::space_handle(H5Dget_space(ds.get()));
  hsize_t dims[2] = {0, 0};
  const int rank = H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  if (rank != (width == 1 ? 1 : 2) || (rank == 2 && static_cast<int64_t>(dims[1]) != width)) {
    return unsupported_format(path + ": '" + name + "' is not (N, " + std::to_string(width) + ")");
  }
  if (*count >= 0 && static_cast<int64_t>(dims[0]) != *count) {
    return unsupported_format(path + ": '" + name + "' has another number of rows");
  }
  *count = static_cast<int64_t>(dims[0]);
  out->resize(static_cast<size_t>(*count * width));
  if (*count > 0 && H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out->data()) < 0) {
    return hdf5::error(path + ": reading '" + name + "'");
  }
  return Status::ok();
}

}  // namespace

Status faces_paths_read(hid_t file, const std::string& path, int64_t count, std::vector<std::string>* out) {
  hdf5::Handle ds = hdf5::dataset_handle(H5Dopen2(file, "paths", H5P_DEFAULT));
  if (!ds.valid()) return hdf5::error(path + ": no dataset 'paths'");
  hdf5::Handle space = hdf5::space_handle(H5Dget_space(ds.get()));
  hsize_t n = 0;
  if (H5Sget_simple_extent_dims(space.get(), &n, nullptr) != 1 || static_cast<int64_t>(n) != count) {
    return unsupported_format(path + ": 'paths' does not have one entry per face");
  }
  KILN_TRY_ASSIGN(const hdf5::Handle type, hdf5::string_type());
  std::vector<char*> strings(static_cast<size_t>(count), nullptr);
  if (count > 0 && H5Dread(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, strings.data()) < 0) {
    return hdf5::error(path + ": reading 'paths'");
  }
  for (char* s : strings) out->emplace_back(s != nullptr ? s : "");
  if (count > 0) H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, strings.data());
  return Status::ok();
}

Result<FaceCollection> face_collection_read(const std::string& path) {
  hdf5::ErrorScope quiet;
  hdf5::Handle file = hdf5::file_handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) return hdf5::error(path + ": cannot open as HDF5");
  FaceCollection c;
  c.count = -1;
  KILN_TRY(rows_read(file.get(), path, "embeddings", kFaceEmbeddingSize, &c.count, &c.embeddings));
  KILN_TRY(rows_read(file.get(), path, "box", 4, &c.count, &c.boxes));
  KILN_TRY(faces_paths_read(file.get(), path, c.count, &c.paths));
  hdf5::Handle settings = hdf5::attribute_handle(H5Aopen(file.get(), "settings", H5P_DEFAULT));
  if (!settings.valid()) return hdf5::error(path + ": no 'settings' attribute (not a kiln faces output?)");
  KILN_TRY_ASSIGN(c.settings, hdf5::attribute_read_string(settings.get(), "settings"));
  return c;
}

}  // namespace kiln
