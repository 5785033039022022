#include "io/image_inputs.h"

#include "kiln/codec.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace kiln {

namespace {

namespace fs = std::filesystem;

std::string trim(const std::string& s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

Status expand_one(const std::string& arg, std::vector<std::string>* out) {
  std::error_code ec;
  if (fs::is_directory(arg, ec)) {
    KILN_TRY_ASSIGN(auto files, image_inputs_folder(arg));
    out->insert(out->end(), files.begin(), files.end());
  } else {
    out->push_back(arg);
  }
  return Status::ok();
}

}  // namespace

bool image_path_is_image(const std::string& path) { return image_format_from_path(path) != ImageFormat::kUnknown; }

Result<std::vector<std::string>> image_inputs_folder(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return io_error(dir + ": cannot read the folder: " + ec.message());
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return io_error(dir + ": cannot read the folder: " + ec.message());
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && image_path_is_image(it->path().string())) files.push_back(it->path().string());
  }
  if (ec) return io_error(dir + ": cannot read the folder: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::vector<std::string>> image_inputs_list(const std::string& list_path) {
  std::ifstream in(list_path);
  if (!in) return io_error(list_path + ": cannot open the list file");
  const fs::path base = fs::path(list_path).parent_path();
  std::vector<std::string> out;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    if (line.find('\0') != std::string::npos) {  // the OS would read the path only up to it: another file
      return invalid_argument(list_path + ":" + std::to_string(number) + ": a path cannot hold a NUL byte");
    }
    fs::path p(line);
    if (p.is_relative() && !base.empty()) p = base / p;
    KILN_TRY(expand_one(p.string(), &out));
  }
  if (in.bad()) return io_error(list_path + ": cannot read the list file");
  return out;
}

Result<std::vector<std::string>> image_inputs_collect(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& arg : args) {
    if (arg.size() > 1 && arg[0] == '@') {
      KILN_TRY_ASSIGN(auto listed, image_inputs_list(arg.substr(1)));
      out.insert(out.end(), listed.begin(), listed.end());
    } else {
      KILN_TRY(expand_one(arg, &out));
    }
  }
  return out;
}

}  // namespace kiln
