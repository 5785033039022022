// The committed units of a long job, so that a killed run continues where it stopped (--resume): each unit's
// results go to "<base>.parts/part-<k>.bin", written crash-safely with a CRC-32 of its whole content; run.json
// records the settings and inputs, so that a resume with other ones is refused. The job assembles its outputs from
// the parts at the end and removes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/status.h"

namespace kiln {

struct JobPart {
  nlohmann::json header;  // the unit's results that are text and counts
  std::string blob;       // and its binary ones (may be empty)
  int64_t index = 0;      // set by read
};

// How a job's units finish: kInOrder (each part follows the last: a resume keeps the valid prefix) or kAnyOrder
// (units finish independently, as the streams of a segment job: a resume keeps every valid part).
enum class PartOrder : uint8_t { kInOrder = 0, kAnyOrder };

class JobParts {
 public:
  // `base`: the output the parts belong to; `kind` names the job in every part ("faces", "quality"), so that one
  // job never takes another's parts.
  JobParts(const std::string& base, std::string kind, PartOrder order = PartOrder::kInOrder);

  const std::string& dir() const { return m_dir; }
  bool exists() const;
  // The parts a run continues from: none for a new run (the folder and run.json are created); with `resume`, the
  // valid parts of the killed run by index — in order, the first damaged or missing one and every later one are
  // removed; in any order, every damaged one (`notes` says which were damaged). InvalidArgument when parts exist
  // without `resume`, or run.json differs from `run` (the settings and inputs, compared as text).
  Result<std::vector<JobPart>> open(const std::string& run, bool resume, std::vector<std::string>* notes);
  Status write(int64_t index, const JobPart& part) const;
  Result<JobPart> read(int64_t index) const;
  // Removes the folder once the outputs are committed.
  Status remove() const;

 private:
  std::string part_path(int64_t index) const;
  Result<std::vector<JobPart>> resume(const std::string& run, std::vector<std::string>* notes);

  std::string m_dir;
  std::string m_magic;
  PartOrder m_order;
};

}  // namespace kiln
