// `kiln info --verify`: recomputes the content checksum of a finished dataset (a single file, or every file a VDS
// maps) and compares it with the stored one.
#include <filesystem>
#include <set>
#include <vector>

#include "apps/render/hdf5_dataset.h"
#include "apps/render/hdf5_info.h"
#include "io/hdf5_zstd_register.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

// The source files a virtual `images` dataset maps, resolved against the VDS file's folder, in mapping order.
Result<std::vector<std::string>> vds_sources(const std::string& path, hid_t file) {
  hdf5::Handle images = hdf5::dataset_handle(H5Dopen2(file, "images", H5P_DEFAULT));
  if (!images.valid()) return hdf5::error(path + ": cannot open images");
  hdf5::Handle dcpl = hdf5::plist_handle(H5Dget_create_plist(images.get()));
  size_t count = 0;
  if (!dcpl.valid() || H5Pget_virtual_count(dcpl.get(), &count) < 0) return hdf5::error(path + ": cannot read mapping");
  std::vector<std::string> sources;
  std::set<std::string> seen;
  const fs::path folder = fs::path(path).parent_path();
  for (size_t i = 0; i < count; ++i) {
    const ssize_t length = H5Pget_virtual_filename(dcpl.get(), i, nullptr, 0);
    if (length < 0) return hdf5::error(path + ": cannot read mapping " + std::to_string(i));
    std::string name(static_cast<size_t>(length) + 1, '\0');
    H5Pget_virtual_filename(dcpl.get(), i, name.data(), name.size());
    name.resize(static_cast<size_t>(length));
    const std::string source = name == "." ? path : (fs::path(name).is_absolute() ? name : (folder / name).string());
    if (seen.insert(source).second) sources.push_back(source);
  }
  return sources;
}

}  // namespace

Status hdf5_verify(const std::string& path, std::string* out) {
  hdf5::ErrorScope quiet;
  KILN_TRY(hdf5_zstd_register());
  // Each file is read whole, with its checksum, in a child first (a damaged file can crash libhdf5): the top file,
  // then a VDS's sources.
  bool top_present = false;
  KILN_TRY(hdf5::checksum_verify_isolated(path, &top_present));
  std::vector<std::string> files;
  bool is_virtual = false;
  {
    KILN_TRY_ASSIGN(hdf5::Handle file, hdf5::file_open_read(path));
    KILN_TRY_ASSIGN(const hdf5::FileShape shape, hdf5::shape_read(file.get()));
    is_virtual = shape.is_virtual;
    if (is_virtual) {
      KILN_TRY_ASSIGN(files, vds_sources(path, file.get()));
    } else {
      files.push_back(path);
    }
  }
  int64_t unchecked = 0;
  for (const std::string& file : files) {
    bool present = top_present;
    if (is_virtual) KILN_TRY(hdf5::checksum_verify_isolated(file, &present));
    *out += file + (present ? ": ok\n" : ": no checksum stored (written before kiln kept checksums)\n");
    unchecked += present ? 0 : 1;
  }
  *out += "verified " + std::to_string(files.size() - static_cast<size_t>(unchecked)) + " of " +
          std::to_string(files.size()) + (files.size() == 1 ? " file" : " files") + "\n";
  return Status::ok();
}

}  // namespace kiln
