#include "apps/render/hdf5_info.h"

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "apps/render/hdf5_dataset.h"
#include "io/hdf5_zstd_register.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

std::string bytes_human(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buf[64];
  if (unit == 0) {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f %s", value, units[unit]);
  }
  return buf;
}

std::string double_text(double value) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, result.ptr);
}

std::string pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string dims_text(const std::vector<hsize_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(dims[i]);
  }
  if (dims.size() == 1) s += ",";
  return s + ")";
}

std::string type_text(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  switch (cls) {
    case H5T_INTEGER: {
      const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
      return std::string(is_signed ? "int" : "uint") + std::to_string(size * 8);
    }
    case H5T_FLOAT: return "float" + std::to_string(size * 8);
    case H5T_STRING: return "string";
    default: return "other";
  }
}

std::string filters_text(hid_t dcpl) {
  const int n = H5Pget_nfilters(dcpl);
  if (n <= 0) return "no filter";
  std::string s;
  for (int i = 0; i < n; ++i) {
    unsigned int flags = 0;
    unsigned int config = 0;
    size_t cd_nelmts = 8;
    unsigned int cd_values[8] = {0};
    char name[128] = {0};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &cd_nelmts, cd_values,
                                           sizeof(name), name, &config);
    if (!s.empty()) s += ", ";
    if (id == H5Z_FILTER_DEFLATE) {
      s += "gzip level " + std::to_string(cd_nelmts > 0 ? cd_values[0] : 0);
    } else if (id == H5Z_FILTER_SHUFFLE) {
      s += "shuffle";
    } else if (id == kHdf5ZstdFilterId) {
      s += "zstd (32015) level " + std::to_string(cd_nelmts > 0 ? static_cast<int>(cd_values[0]) : 3);
    } else {
      s += std::string(name[0] != '\0' ? name : "filter") + " (" + std::to_string(id) + ")";
    }
  }
  return s;
}

std::string attribute_text(hid_t attr, const char* name) {
  hdf5::Handle type = hdf5::type_handle(H5Aget_type(attr));
  hdf5::Handle space = hdf5::space_handle(H5Aget_space(attr));
  if (!type.valid() || !space.valid()) return "?";
  const H5T_class_t cls = H5Tget_class(type.get());
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  const bool scalar = H5Sget_simple_extent_type(space.get()) == H5S_SCALAR;
  if (cls == H5T_STRING) {
    if (!scalar && n != 1) return "<string array>";
    auto value = hdf5::attribute_read_string(attr, name);
    if (!value.is_ok()) {
      H5Eclear2(H5E_DEFAULT);
      return "?";
    }
    return value.value();
  }
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || n < 0 || n > 64) return "<" + type_text(type.get()) + ">";
  std::vector<std::string> items;
  if (cls == H5T_INTEGER) {
    std::vector<long long> values(static_cast<size_t>(n));
    if (H5Aread(attr, H5T_NATIVE_LLONG, values.data()) < 0) return "?";
    for (long long v : values) items.push_back(std::to_string(v));
  } else {
    std::vector<double> values(static_cast<size_t>(n));
    if (H5Aread(attr, H5T_NATIVE_DOUBLE, values.data()) < 0) return "?";
    for (double v : values) items.push_back(double_text(v));
  }
  if (scalar && items.size() == 1) return items[0];
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i > 0 ? ", " : "") + items[i];
  return s + "]";
}

struct ShardRow {
  std::string file;
  std::string first_index = "-";
  std::string count = "-";
  std::string complete = "missing";
  std::string bytes = "-";
  std::string piece;  // "2/4" for a piece of a sharded job
};

ShardRow shard_row(const fs::path& dir, const std::string& file) {
  ShardRow row;
  row.file = file;
  const std::string path = (dir / file).string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return row;
  row.bytes = std::to_string(fs::file_size(path, ec));
  auto summary = hdf5::file_summary_read(path);
  if (!summary.is_ok()) {
    row.complete = "unreadable";
    return row;
  }
  row.first_index = std::to_string(summary->attributes.first_index);
  row.count = std::to_string(summary->attributes.count);
  row.complete = summary->attributes.complete ? "yes" : "no";
  if (summary->attributes.shard_count > 0) {
    row.piece = std::to_string(summary->attributes.shard_index) + "/" + std::to_string(summary->attributes.shard_count);
  }
  return row;
}

void shard_table(const std::vector<ShardRow>& rows, std::string& out) {
  size_t width = 4;
  for (const ShardRow& r : rows) width = std::max(width, r.file.size());
  const bool pieces = std::any_of(rows.begin(), rows.end(), [](const ShardRow& r) { return !r.piece.empty(); });
  out += "  " + pad("file", width + 2) + (pieces ? pad("piece", 13) : "") + pad("first_index", 13) + pad("count", 10) +
         pad("complete", 12) + "bytes\n";
  for (const ShardRow& r : rows) {
    out += "  " + pad(r.file, width + 2) + (pieces ? pad(r.piece, 13) : "") + pad(r.first_index, 13) +
           pad(r.count, 10) + pad(r.complete, 12) + r.bytes + "\n";
  }
}

Status manifest_print(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open");
  nlohmann::json manifest = nlohmann::json::parse(in, nullptr, false);
  if (manifest.is_discarded() || !manifest.is_object() || !manifest.contains("shards")) {
    return unsupported_format(path + ": not a kiln shard manifest");
  }
  out += path + ": kiln shard manifest";
  if (manifest.contains("vds")) out += " for " + manifest["vds"].get<std::string>();
  out += "\n";
  if (manifest.contains("totals")) {
    out += "totals:\n";
    for (const auto& [key, value] : manifest["totals"].items()) out += "  " + pad(key, 18) + value.dump() + "\n";
  }
  if (manifest.contains("layout")) {
    out += "layout:\n";
    for (const auto& [key, value] : manifest["layout"].items()) out += "  " + pad(key, 18) + value.dump() + "\n";
  }
  if (manifest.contains("attributes")) {
    out += "attributes:\n";
    for (const auto& [key, value] : manifest["attributes"].items()) {
      out += "  " + pad(key, 18) + (value.is_string() ? value.get<std::string>() : value.dump()) + "\n";
    }
  }
  const fs::path dir = fs::path(path).parent_path();
  std::vector<ShardRow> rows;
  for (const auto& shard : manifest["shards"]) {
    if (!shard.contains("file") || !shard["file"].is_string()) continue;
    rows.push_back(shard_row(dir, shard["file"].get<std::string>()));
  }
  out += "shards (" + std::to_string(rows.size()) + ", checked on disk):\n";
  shard_table(rows, out);
  return Status::ok();
}

Status file_print(const std::string& path, std::string& out) {
  KILN_TRY_ASSIGN(hdf5::Handle file, hdf5::file_open_read(path));
  std::error_code ec;
  out += path + ": HDF5, " + bytes_human(fs::file_size(path, ec)) + "\n";

  H5G_info_t group{};
  if (H5Gget_info(file.get(), &group) < 0) return hdf5::error(path + ": cannot list the root group");
  out += "datasets:\n";
  std::vector<std::string> sources;
  for (hsize_t i = 0; i < group.nlinks; ++i) {
    char name[256] = {0};
    if (H5Lget_name_by_idx(file.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof(name), H5P_DEFAULT) < 0) {
      continue;
    }
    H5O_info_t info{};
    if (H5Oget_info_by_name(file.get(), name, &info, H5P_DEFAULT) < 0 || info.type != H5O_TYPE_DATASET) {
      H5Eclear2(H5E_DEFAULT);
      out += "  " + std::string(name) + " (not a dataset)\n";
      continue;
    }
    hdf5::Handle ds = hdf5::dataset_handle(H5Dopen2(file.get(), name, H5P_DEFAULT));
    if (!ds.valid()) return hdf5::error(path + ": cannot open " + name);
    hdf5::Handle type = hdf5::type_handle(H5Dget_type(ds.get()));
    hdf5::Handle space = hdf5::space_handle(H5Dget_space(ds.get()));
    hdf5::Handle dcpl = hdf5::plist_handle(H5Dget_create_plist(ds.get()));
    const int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> dims(static_cast<size_t>(std::max(rank, 0)));
    if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    uint64_t raw = H5Tget_size(type.get());
    for (hsize_t d : dims) raw *= d;
    std::string line = "  " + pad(name, 11) + pad(type_text(type.get()), 9) + pad(dims_text(dims), 20);
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if (layout == H5D_VIRTUAL) {
      size_t count = 0;
      H5Pget_virtual_count(dcpl.get(), &count);
      line += "virtual, " + std::to_string(count) + " source" + (count == 1 ? "" : "s");
      if (std::string(name) == "images") {
        for (size_t m = 0; m < count; ++m) {
          const ssize_t len = H5Pget_virtual_filename(dcpl.get(), m, nullptr, 0);
          if (len < 0) continue;
          std::string source(static_cast<size_t>(len) + 1, '\0');
          H5Pget_virtual_filename(dcpl.get(), m, source.data(), source.size());
          source.resize(static_cast<size_t>(len));
          std::string unescaped;
          for (size_t c = 0; c < source.size(); ++c) {
            unescaped += source[c];
            if (source[c] == '%' && c + 1 < source.size() && source[c + 1] == '%') ++c;
          }
          if (std::find(sources.begin(), sources.end(), unescaped) == sources.end()) sources.push_back(unescaped);
        }
      }
    } else {
      if (layout == H5D_CHUNKED && rank > 0) {
        std::vector<hsize_t> chunk(static_cast<size_t>(rank));
        H5Pget_chunk(dcpl.get(), rank, chunk.data());
        line += "chunks " + dims_text(chunk) + "  ";
      }
      line += filters_text(dcpl.get());
      const uint64_t stored = H5Dget_storage_size(ds.get());
      line += "  stored " + bytes_human(stored);
      if (stored > 0 && raw > 0) {
        char ratio[32];
        std::snprintf(ratio, sizeof(ratio), " (%.1fx)", static_cast<double>(raw) / static_cast<double>(stored));
        line += ratio;
      }
    }
    out += line + "\n";
  }

  H5O_info_t root{};
  if (H5Oget_info(file.get(), &root) < 0) return hdf5::error(path + ": cannot read root attributes");
  out += "attributes:\n";
  for (hsize_t i = 0; i < root.num_attrs; ++i) {
    hdf5::Handle attr = hdf5::attribute_handle(
        H5Aopen_by_idx(file.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT));
    if (!attr.valid()) continue;
    char name[256] = {0};
    H5Aget_name(attr.get(), sizeof(name), name);
    out += "  " + pad(name, 18) + attribute_text(attr.get(), name) + "\n";
  }
  H5Eclear2(H5E_DEFAULT);

  if (!sources.empty()) {
    const fs::path dir = fs::path(path).parent_path();
    std::vector<ShardRow> rows;
    for (const std::string& source : sources) rows.push_back(shard_row(dir, source));
    const bool pieces = std::any_of(rows.begin(), rows.end(), [](const ShardRow& r) { return !r.piece.empty(); });
    out += std::string(pieces ? "pieces (" : "shards (") + std::to_string(rows.size()) + ", via VDS):\n";
    shard_table(rows, out);
  }
  return file.close();
}

}  // namespace

Status hdf5_info_print(const std::string& path, std::string* out) {
  if (out == nullptr) return invalid_argument("hdf5_info_print needs an output string");
  hdf5::ErrorScope quiet;
  KILN_TRY(hdf5_zstd_register());
  std::error_code ec;
  if (!fs::exists(path, ec)) return io_error(path + ": no such file");
  if (fs::path(path).extension() == ".json") return manifest_print(path, *out);
  return file_print(path, *out);
}

}  // namespace kiln
