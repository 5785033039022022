// Piece file names: {stem}.shard-{I:05d}-of-{N:05d}{ext} next to the whole job's output.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "kiln/scale.h"

namespace kiln {

namespace fs = std::filesystem;

std::string piece_path(const std::string& output, const Shard& shard) {
  const fs::path path(output);
  char tag[64];
  std::snprintf(tag, sizeof(tag), ".shard-%05lld-of-%05lld", static_cast<long long>(shard.index),
                static_cast<long long>(shard.count));
  return (path.parent_path() / (path.stem().string() + tag + path.extension().string())).string();
}

bool piece_name_parse(const std::string& path, PieceName* name) {
  static const std::regex pattern(R"(^(.+)\.shard-([0-9]{5,12})-of-([0-9]{5,12})(\.[A-Za-z0-9]+)?$)");
  const std::string file = fs::path(path).filename().string();
  std::smatch match;
  if (!std::regex_match(file, match, pattern)) return false;
  PieceName parsed;
  parsed.path = path;
  parsed.stem = match[1].str();
  parsed.index = std::stoll(match[2].str());
  parsed.count = std::stoll(match[3].str());
  parsed.extension = match[4].str();
  if (parsed.count < 1 || parsed.index >= parsed.count) return false;
  // Only the canonical spelling (a re-padded name would be a second copy of the same piece).
  Shard shard{parsed.index, parsed.count, {}};
  if (fs::path(piece_path(parsed.stem + parsed.extension, shard)).filename() != file) return false;
  *name = std::move(parsed);
  return true;
}

std::vector<PieceName> pieces_find(const std::string& dir) {
  std::vector<PieceName> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    PieceName name;
    if (it->is_regular_file(ec) && piece_name_parse(it->path().string(), &name)) found.push_back(std::move(name));
  }
  std::sort(found.begin(), found.end(), [](const PieceName& a, const PieceName& b) {
    return std::tie(a.stem, a.extension, a.index, a.count) < std::tie(b.stem, b.extension, b.index, b.count);
  });
  return found;
}

}  // namespace kiln
