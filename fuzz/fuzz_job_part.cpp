// A part of a resumable job (io/job_parts.h) as --resume reads it: the quality job's, and the faces job's with its
// rows. Parts are kiln's own files, but a damaged disk or a copy from elsewhere can hand --resume any bytes.
#include <filesystem>

#include "fuzz_input.h"
#include "io/job_parts.h"
#if KILN_HAS_FACES
#include "apps/faces/faces_parts.h"
#include "apps/faces/faces_rows.h"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base = [] {
    const std::string path = kiln::fuzz::input_file(nullptr, 0, "-job");
    std::filesystem::create_directories(path + ".parts");
    kiln::fuzz::remove_at_exit(path + ".parts");
    return path;
  }();
  (void)kiln::fuzz::input_file(data, size, "-job.parts/part-00000000.bin");
  (void)kiln::JobParts(base, "quality").read(0);
#if KILN_HAS_FACES
  (void)kiln::FacesParts(base, kiln::faces_row_floats()).read(0);
#endif
  return 0;
}
