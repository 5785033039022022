// The parts of a faces run (io/job_parts.h), so that a killed run continues where it stopped (--resume): every few
// batches, the rows, paths, JSON lines and counts of those images go to "<output>.parts/part-<k>.bin".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/job_parts.h"
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

  const std::string& dir() const { return m_parts.dir(); }
  // JobParts::open: the parts a run continues from.
  Result<std::vector<FacesPart>> open(const std::string& run, bool resume, std::vector<std::string>* notes);
  Status write(int64_t index, const FacesPart& part) const;
  Result<FacesPart> read(int64_t index) const;
  Status remove() const { return m_parts.remove(); }

 private:
  Result<FacesPart> from_part(const JobPart& part) const;

  JobParts m_parts;
  int64_t m_row_floats;
};

}  // namespace kiln
