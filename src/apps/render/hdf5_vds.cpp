#include "apps/render/hdf5_vds.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apps/render/hdf5_dataset.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

using ShardEntry = VdsSource;

// A source file's name as the VDS and the manifest store it: relative to the VDS file's folder, so the dataset
// can move as a whole.
std::string source_relative(const std::string& path, const std::string& out_path) {
  const fs::path out_dir = fs::path(out_path).parent_path().empty() ? fs::path(".") : fs::path(out_path).parent_path();
  std::error_code ec;
  const fs::path relative = fs::relative(path, out_dir, ec);
  if (!ec && !relative.empty()) return relative.string();
  const fs::path absolute = fs::absolute(path, ec);
  return ec ? path : absolute.string();
}

// A source name for H5Pset_virtual: relative, with the printf-style '%' escaped.
std::string vds_source_name(const std::string& path, const std::string& out_path) {
  std::string out;
  for (char c : source_relative(path, out_path)) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

Status vds_dataset_create(hid_t file, const std::string& out_path, const char* name, hid_t type,
                          const std::vector<hsize_t>& row_shape, int64_t total, const std::vector<ShardEntry>& shards) {
  std::vector<hsize_t> dims{static_cast<hsize_t>(total)};
  for (hsize_t d : row_shape) dims.push_back(d);
  const int rank = static_cast<int>(dims.size());
  hdf5::Handle space = hdf5::space_handle(H5Screate_simple(rank, dims.data(), nullptr));
  hdf5::Handle dcpl = hdf5::plist_handle(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.valid() || !dcpl.valid() || H5Pset_obj_track_times(dcpl.get(), 0) < 0) {
    return hdf5::error(std::string("cannot prepare virtual dataset ") + name);
  }
  for (const ShardEntry& shard : shards) {
    const int64_t count = shard.summary.attributes.count;
    if (count == 0) continue;
    std::vector<hsize_t> src_dims{static_cast<hsize_t>(count)};
    std::vector<hsize_t> start{static_cast<hsize_t>(shard.summary.attributes.first_index)};
    for (hsize_t d : row_shape) {
      src_dims.push_back(d);
      start.push_back(0);
    }
    hdf5::Handle src_space = hdf5::space_handle(H5Screate_simple(rank, src_dims.data(), nullptr));
    if (!src_space.valid() || H5Sselect_all(src_space.get()) < 0 ||
        H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, src_dims.data(), nullptr) < 0 ||
        H5Pset_virtual(dcpl.get(), space.get(), vds_source_name(shard.path, out_path).c_str(), (std::string("/") + name).c_str(),
                       src_space.get()) < 0) {
      return hdf5::error(std::string("cannot map ") + shard.path + " into virtual dataset " + name);
    }
  }
  if (H5Sselect_all(space.get()) < 0) return hdf5::error("cannot reset selection");
  hdf5::Handle dataset =
      hdf5::dataset_handle(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  if (!dataset.valid()) return hdf5::error(std::string("cannot create virtual dataset ") + name);
  return dataset.close();
}

nlohmann::json attributes_json(const hdf5::FileAttributes& a) {
  const DatasetAttributes& d = a.dataset;
  nlohmann::json j;
  j["seq_len"] = d.seq_len;
  j["stride"] = d.stride;
  j["line_width"] = d.line_width;
  j["style"] = d.style;
  j["resolution"] = {d.width, d.height, d.dpi};
  j["source"] = d.source;
  j["column"] = d.column;
  j["skipped_windows"] = d.skipped_windows;
  j["dropped_no_future"] = d.dropped_no_future;
  j["label_horizon"] = d.label_horizon;
  j["label_threshold"] = d.label_threshold;
  j["kiln_version"] = d.kiln_version;
  j["config"] = d.config_json;
  j["created_at"] = d.created_at;
  j["compression"] = a.compression;
  return j;
}

Status manifest_write(const std::string& out_path, const std::vector<ShardEntry>& shards,
                      const hdf5::FileAttributes& attributes, const hdf5::FileShape& shape) {
  nlohmann::json manifest;
  const bool pieces = !shards.empty() && shards.front().summary.attributes.shard_count > 0;
  manifest["format"] = pieces ? "kiln-hdf5-pieces" : "kiln-hdf5-shards";
  manifest["version"] = 1;
  manifest["vds"] = hdf5::file_name(out_path);
  uint64_t bytes = 0;
  nlohmann::json list = nlohmann::json::array();
  for (const ShardEntry& shard : shards) {
    nlohmann::json entry = {{"file", source_relative(shard.path, out_path)},
                            {"first_index", shard.summary.attributes.first_index},
                            {"count", shard.summary.attributes.count},
                            {"bytes", shard.bytes}};
    if (shard.summary.attributes.shard_count > 0) entry["piece"] = shard.summary.attributes.shard_index;
    list.push_back(std::move(entry));
    bytes += shard.bytes;
  }
  manifest["totals"] = {{"images", attributes.total},
                        {"shards", shards.size()},
                        {"bytes", bytes},
                        {"images_per_file", attributes.images_per_file}};
  manifest["layout"] = {{"width", shape.width},
                        {"height", shape.height},
                        {"dtype", pixel_type_name(shape.dtype)},
                        {"seq_len", shape.seq_len},
                        {"seq_channels", shape.seq_channels},
                        {"has_labels", shape.has_labels}};
  manifest["attributes"] = attributes_json(attributes);
  manifest["shards"] = std::move(list);

  const std::string path = hdf5::manifest_path(out_path);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return io_error(tmp + ": cannot create");
    out << manifest.dump(2) << '\n';
    out.flush();
    if (!out) return io_error(tmp + ": write failed");
  }
  return file_commit(tmp, path);
}

}  // namespace

Status hdf5_vds_build(const std::string& out_path, const std::string& created_at, const std::string& run_report,
                      int64_t fallbacks) {
  hdf5::ErrorScope quiet;
  const auto found = hdf5::shards_list(out_path);
  if (found.empty()) {
    return io_error("no shards of " + out_path + " found (expected " + hdf5::file_name(hdf5::shard_path(out_path, 0)) +
                    ", ...)");
  }
  // The first shard present defines the job; every expected shard must exist, be complete and agree with it.
  KILN_TRY_ASSIGN(hdf5::FileSummary reference, hdf5::file_summary_read(found.front().second));
  const hdf5::FileAttributes& ref = reference.attributes;
  if (ref.images_per_file <= 0) {
    return io_error(found.front().second + " is not a shard (images_per_file attribute is " +
                    std::to_string(ref.images_per_file) + ")");
  }
  const DatasetLayout layout = hdf5::layout_from(ref, reference.shape);
  const int64_t expected = std::max<int64_t>(1, (ref.total + ref.images_per_file - 1) / ref.images_per_file);
  std::vector<ShardEntry> shards;
  size_t next_found = 0;
  for (int64_t k = 0; k < expected; ++k) {
    const std::string path = hdf5::shard_path(out_path, k);
    if (next_found >= found.size() || found[next_found].first != k) {
      return io_error("shard " + hdf5::file_name(path) + " of " + out_path + " is missing (" +
                      std::to_string(expected) + " shards expected); rerun with --resume to write it");
    }
    ++next_found;
    ShardEntry entry;
    entry.path = path;
    KILN_TRY_ASSIGN(entry.summary, hdf5::file_summary_read(path));
    const hdf5::FileAttributes& a = entry.summary.attributes;
    const int64_t first = k * ref.images_per_file;
    const int64_t count = std::min(ref.images_per_file, ref.total - first);
    if (!a.complete) return io_error("shard " + path + " is incomplete; rerun with --resume to rewrite it");
    if (a.first_index != first || a.count != count || entry.summary.shape.count != count) {
      return io_error("shard " + path + " holds images " + std::to_string(a.first_index) + "+" +
                      std::to_string(a.count) + ", expected " + std::to_string(first) + "+" + std::to_string(count));
    }
    const std::string diff = hdf5::settings_diff(a, entry.summary.shape, ref, layout);
    if (!diff.empty()) {
      return io_error("shard " + path + " was made with different settings than " + found.front().second + " (" +
                      diff + ")");
    }
    std::error_code ec;
    entry.bytes = fs::file_size(path, ec);
    shards.push_back(std::move(entry));
  }
  if (next_found < found.size()) {
    return io_error("unexpected shard " + found[next_found].second + " (the job has " + std::to_string(expected) +
                    " shards); remove it or rerun with --overwrite");
  }

  hdf5::FileAttributes attributes = ref;
  attributes.count = ref.total;
  attributes.first_index = 0;
  attributes.complete = false;
  attributes.dataset.run_report = run_report;
  attributes.dataset.fallbacks = fallbacks;
  if (!created_at.empty()) {
    attributes.dataset.created_at = created_at;
  } else {
    for (const ShardEntry& shard : shards) {
      attributes.dataset.created_at = std::max(attributes.dataset.created_at, shard.summary.attributes.dataset.created_at);
    }
  }
  return hdf5_vds_write(out_path, shards, attributes, reference.shape);
}

Status hdf5_vds_write(const std::string& out_path, const std::vector<VdsSource>& shards,
                      const hdf5::FileAttributes& attributes, const hdf5::FileShape& shape) {
  hdf5::ErrorScope quiet;
  const DatasetLayout layout = hdf5::layout_from(attributes, shape);

  const std::string tmp = out_path + ".tmp";
  {
    hdf5::Handle fapl = hdf5::plist_handle(hdf5::file_access_plist());
    hdf5::Handle fcpl = hdf5::plist_handle(H5Pcreate(H5P_FILE_CREATE));
    if (!fapl.valid() || !fcpl.valid()) return hdf5::error("cannot create file properties");
    if (H5Pset_obj_track_times(fcpl.get(), 0) < 0) H5Eclear2(H5E_DEFAULT);
    hdf5::Handle file = hdf5::file_handle(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()));
    if (!file.valid()) return hdf5::error(tmp + ": cannot create");
    KILN_TRY(hdf5::attributes_write(file.get(), attributes));
    const hid_t image_type = layout.dtype == PixelType::kU8 ? H5T_STD_U8LE : H5T_IEEE_F32LE;
    std::vector<hsize_t> image_shape{static_cast<hsize_t>(layout.height), static_cast<hsize_t>(layout.width)};
    if (layout.channels > 1) image_shape.push_back(static_cast<hsize_t>(layout.channels));
    KILN_TRY(vds_dataset_create(file.get(), out_path, "images", image_type, image_shape, attributes.total, shards));
    std::vector<hsize_t> seq_shape{static_cast<hsize_t>(layout.seq_len)};
    if (layout.seq_channels != 1) seq_shape.push_back(static_cast<hsize_t>(layout.seq_channels));
    KILN_TRY(vds_dataset_create(file.get(), out_path, "sequences", H5T_IEEE_F32LE, seq_shape, attributes.total, shards));
    KILN_TRY(vds_dataset_create(file.get(), out_path, "index", H5T_STD_I64LE, {}, attributes.total, shards));
    if (layout.has_labels) KILN_TRY(vds_dataset_create(file.get(), out_path, "labels", H5T_STD_I8LE, {}, attributes.total, shards));
    KILN_TRY(hdf5::complete_set(file.get()));
    KILN_TRY(file.close());
  }
  // The dataset first: a manifest never describes a VDS that failed to appear.
  KILN_TRY(file_commit(tmp, out_path));
  return manifest_write(out_path, shards, attributes, shape);
}

}  // namespace kiln
