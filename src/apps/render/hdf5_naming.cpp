// Output naming of the chart dataset's HDF5 files (parts, drafts, shards, manifest).
#include "apps/render/hdf5_dataset.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/hdf5_zstd_register.h"

namespace kiln::hdf5 {

namespace fs = std::filesystem;

// ---- naming ---------------------------------------------------------------------------------------------

namespace {

struct PathParts {
  fs::path dir;
  std::string stem;
  std::string ext;
};

PathParts path_split(const std::string& out) {
  const fs::path p(out);
  PathParts parts;
  parts.dir = p.parent_path();
  parts.stem = p.stem().string();
  parts.ext = p.extension().string();
  if (parts.ext.empty()) parts.ext = ".h5";
  return parts;
}

std::string index_format(const char* fmt, int64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), fmt, static_cast<long long>(index));
  return buf;
}

}  // namespace

std::string parts_dir(const std::string& out) { return out + ".parts"; }

std::string part_path(const std::string& out, int64_t index) {
  return (fs::path(parts_dir(out)) / ("part_" + index_format("%05lld", index) + ".h5")).string();
}

std::string draft_path(const std::string& out, int64_t generation) {
  return (fs::path(parts_dir(out)) / ("draft_" + index_format("%04lld", generation) + ".h5")).string();
}

std::vector<std::pair<int64_t, std::string>> drafts_list(const std::string& out) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(parts_dir(out), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    constexpr size_t kDigits = 4;
    if (name.size() < 6 + kDigits + 3 || name.compare(0, 6, "draft_") != 0) continue;
    const std::string digits = name.substr(6, name.size() - 6 - 3);
    if (digits.size() > 12 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const int64_t generation = std::stoll(digits);
    if (draft_path(out, generation) != it->path().string()) continue;  // e.g. draft_0001.h5.tmp
    found.emplace_back(generation, it->path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string shard_path(const std::string& out, int64_t index) {
  const PathParts parts = path_split(out);
  return (parts.dir / (parts.stem + "_batch_" + index_format("%04lld", index) + parts.ext)).string();
}

std::string manifest_path(const std::string& out) {
  const PathParts parts = path_split(out);
  return (parts.dir / (parts.stem + ".manifest.json")).string();
}

std::vector<std::pair<int64_t, std::string>> shards_list(const std::string& out) {
  const PathParts parts = path_split(out);
  const std::string prefix = parts.stem + "_batch_";
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  const fs::path dir = parts.dir.empty() ? fs::path(".") : parts.dir;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + parts.ext.size()) continue;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - parts.ext.size(), parts.ext.size(), parts.ext) != 0) continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - parts.ext.size());
    if (digits.empty() || digits.size() > 12 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const int64_t index = std::stoll(digits);
    if (shard_path(out, index) != (parts.dir / name).string()) continue;  // e.g. 0-padding differs
    found.emplace_back(index, (parts.dir / name).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

}  // namespace kiln::hdf5
