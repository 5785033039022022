// The outputs a segment run has finished (io/job_parts.h, one part per output, in any order: the streams run side
// by side), so that --resume keeps them: each part holds the stream's summary and the CRC-32 of its output file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/job_parts.h"
#include "kiln/apps/segment.h"

namespace kiln {

class SegmentParts {
 public:
  // `base`: the output folder or file (a piece: its record), the parts go to base + ".parts".
  explicit SegmentParts(const std::string& base) : m_parts(base, "segment", PartOrder::kAnyOrder) {}

  const std::string& dir() const { return m_parts.dir(); }
  // The outputs kept from a killed run, by input index: recorded and still as recorded (`notes` names the others,
  // which are made again). JobParts::open's refusals.
  Result<std::map<int64_t, SegmentStreamSummary>> open(const std::string& run, bool resume,
                                                       std::vector<std::string>* notes);
  // Records input `index`'s finished output (safe from several threads, one index each).
  Status output_done(int64_t index, const SegmentStreamSummary& stream) const;
  Status remove() const { return m_parts.remove(); }

 private:
  JobParts m_parts;
};

}  // namespace kiln
