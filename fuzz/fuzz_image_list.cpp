// The @list file of every image command: one path per line, comments, blank lines, relative paths. The list sits in
// an empty folder of its own, and inputs naming absolute paths or '..' are skipped: a folder in a list is searched
// recursively, and the fuzzer is here for the parser, not for walking the whole file system.
#include <sys/stat.h>

#include <string>

#include "fuzz_input.h"
#include "io/image_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find("..") != std::string::npos) return 0;
  for (size_t start = 0; start < text.size();) {
    size_t first = text.find_first_not_of(" \t\r\v\f", start);
    if (first != std::string::npos && text[first] == '/') return 0;
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  static const std::string dir = [] {
    const std::string d = kiln::fuzz::input_file(nullptr, 0, ".dir");
    std::remove(d.c_str());
    mkdir(d.c_str(), 0700);
    return d;
  }();
  const std::string path = dir + "/list.txt";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  (void)kiln::image_inputs_list(path);
  return 0;
}
