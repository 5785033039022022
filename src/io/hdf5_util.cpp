// HDF5 plumbing shared by the sink, VDS and info: handles, error text, output naming.
#include "io/hdf5_util.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/hdf5_zstd_register.h"

namespace kiln::hdf5 {

namespace fs = std::filesystem;

// ---- handles and errors ----------------------------------------------------------------------------------

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    m_id = other.m_id;
    m_close = other.m_close;
    other.m_id = H5I_INVALID_HID;
  }
  return *this;
}

void Handle::reset() {
  if (m_id >= 0 && m_close != nullptr) {
    ErrorScope quiet;
    if (m_close(m_id) < 0) H5Eclear2(H5E_DEFAULT);
  }
  m_id = H5I_INVALID_HID;
}

Status Handle::close() {
  if (m_id < 0) return Status::ok();
  const hid_t id = m_id;
  m_id = H5I_INVALID_HID;
  if (m_close != nullptr && m_close(id) < 0) return error("cannot close HDF5 object");
  return Status::ok();
}

ErrorScope::ErrorScope() {
  H5Eget_auto2(H5E_DEFAULT, &m_func, &m_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

ErrorScope::~ErrorScope() { H5Eset_auto2(H5E_DEFAULT, m_func, m_data); }

namespace {

struct ErrorWalk {
  std::vector<std::string> lines;
};

herr_t error_walk_cb(unsigned /*n*/, const H5E_error2_t* err, void* data) {
  auto* walk = static_cast<ErrorWalk*>(data);
  std::string line;
  char minor[256] = {0};
  if (H5Eget_msg(err->min_num, nullptr, minor, sizeof(minor)) < 0) minor[0] = '\0';
  if (err->desc != nullptr && err->desc[0] != '\0') line = err->desc;
  if (minor[0] != '\0') line += std::string(line.empty() ? "" : " (") + minor + (line.empty() ? "" : ")");
  if (!line.empty()) walk->lines.push_back(std::move(line));
  return 0;
}

}  // namespace

Status error(const std::string& what) {
  ErrorWalk walk;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, error_walk_cb, &walk);
  H5Eclear2(H5E_DEFAULT);
  std::string message = what;
  if (!walk.lines.empty()) {
    // Outermost (API level) and innermost (the actual cause) are the informative ends of the stack.
    message += ": " + walk.lines.front();
    if (walk.lines.size() > 1) message += ": " + walk.lines.back();
  }
  return io_error(message);
}

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
