// What the fuzz harnesses share: the parsers under test take paths, so each input is written to a file of this
// process (in TMPDIR, on tmpfs where possible) first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace kiln::fuzz {

// The same file for every input of this process, named with `suffix` (some readers go by the extension).
inline std::string input_file(const uint8_t* data, size_t size, const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/kiln-fuzz-" + std::to_string(getpid()) +
                           suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace kiln::fuzz
