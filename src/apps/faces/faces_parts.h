// The parts of a faces run, so that a killed run continues where it stopped (--resume): every few batches, the
// rows, paths, JSON lines and counts of those images go to "<output>.parts/part-<k>.bin" (crash-safe, with a CRC of
// its rows); the output files are assembled from the parts at the end and the parts removed. run.json records the
// settings and inputs, so that a resume with other ones is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

struct FacesPartCounts {
  int64_t images = 0;
  int64_t unreadable = 0;
  int64_t images_with_faces = 0;
  int64_t faces = 0;
  int64_t accepted = 0;
  int64_t duplicates = 0;
  int64_t written = 0;
};

struct FacesPart {
  int64_t first = 0;  // the first input of the part
  FacesPartCounts counts;
  std::vector<float> rows;          // written * row_floats: the output's arrays, one row per kept face
  std::vector<std::string> paths;   // one per row
  std::vector<std::string> lines;   // the JSON lines of the part's inputs
};

class FacesParts {
 public:
  // `base`: the output (or the JSON lines file); the parts go to base + ".parts".
  FacesParts(const std::string& base, int64_t row_floats);

  const std::string& dir() const { return m_dir; }
  bool exists() const;
  // Creates the folder and writes run.json (`run`: the settings and inputs, compared on resume).
  Status start(const std::string& run);
  // The valid parts of a killed run, in order; the first damaged or missing one and every later one are removed
  // (`notes` says which were damaged). InvalidArgument when run.json differs from `run`.
  Result<std::vector<FacesPart>> resume(const std::string& run, std::vector<std::string>* notes);
  Status write(int64_t index, const FacesPart& part) const;
  Result<FacesPart> read(int64_t index) const;
  // Removes the folder once the outputs are committed.
  Status remove() const;

 private:
  std::string part_path(int64_t index) const;

  std::string m_dir;
  int64_t m_row_floats;
};

}  // namespace kiln
