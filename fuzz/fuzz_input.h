// What the fuzz harnesses share: the parsers under test take paths, so each input is written to a file of this
// process (in TMPDIR, on tmpfs where possible) first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

namespace kiln::fuzz {

// The files and folders this process made, removed when it exits, the last made first (make test replays every
// corpus: one process each).
inline std::vector<std::string>& input_files_made() {
  static std::vector<std::string> files;
  return files;
}

inline void input_files_remove() {
  const std::vector<std::string>& made = input_files_made();
  for (auto it = made.rbegin(); it != made.rend(); ++it) std::remove(it->c_str());  // a folder once it is empty
}

inline void remove_at_exit(const std::string& path) {
  std::vector<std::string>& made = input_files_made();
  if (made.empty()) std::atexit(input_files_remove);  // registered after `made` exists: runs before it is destroyed
  for (const std::string& file : made) {
    if (file == path) return;
  }
  made.push_back(path);
}

// The same file for every input of this process, named with `suffix` (some readers go by the extension).
inline std::string input_file(const uint8_t* data, size_t size, const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/kiln-fuzz-" + std::to_string(getpid()) +
                           suffix;
  remove_at_exit(path);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace kiln::fuzz
