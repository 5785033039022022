#include "apps/segment/segment_parts.h"

#include "io/crc32.h"

namespace kiln {

Result<std::map<int64_t, SegmentStreamSummary>> SegmentParts::open(const std::string& run, bool resume,
                                                                   std::vector<std::string>* notes) {
  KILN_TRY_ASSIGN(const std::vector<JobPart> parts, m_parts.open(run, resume, notes));
  std::map<int64_t, SegmentStreamSummary> kept;
  for (const JobPart& part : parts) {
    SegmentStreamSummary s;
    std::string crc;
    try {
      const nlohmann::json& h = part.header;
      s.input = h.at("input").get<std::string>();
      s.output = h.at("output").get<std::string>();
      s.decode = h.at("decode").get<std::string>();
      s.encode = h.at("encode").get<std::string>();
      s.frames = h.at("frames").get<int64_t>();
      s.written = h.at("written").get<int64_t>();
      s.dropped = h.at("dropped").get<int64_t>();
      s.device_frames = h.value("device_frames", int64_t{0});
      s.device_composites = h.value("device_composites", int64_t{0});
      s.foreground = h.at("foreground").get<double>();
      s.errors = h.at("errors").get<std::vector<std::string>>();
      s.error_count = h.at("error_count").get<int64_t>();
      crc = h.at("output_crc32").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      notes->push_back(dir() + ": part " + std::to_string(part.index) + " has a bad header (" + e.what() +
                       "): its input is segmented again");
      continue;
    }
    auto now = file_crc32(s.output);
    if (!now.is_ok() || now.value() != crc) {
      notes->push_back(s.output + (now.is_ok() ? " changed since it was finished" : " is gone") +
                       ": it is segmented again");
      continue;
    }
    s.resumed = true;
    kept[part.index] = std::move(s);
  }
  return kept;
}

Status SegmentParts::output_done(int64_t index, const SegmentStreamSummary& s) const {
  KILN_TRY_ASSIGN(const std::string crc, file_crc32(s.output));
  JobPart part;
  part.header = {{"input", s.input},          {"output", s.output},       {"decode", s.decode},
                 {"encode", s.encode},        {"frames", s.frames},       {"written", s.written},
                 {"dropped", s.dropped},      {"device_frames", s.device_frames},
                 {"device_composites", s.device_composites},
                 {"foreground", s.foreground}, {"errors", s.errors},
                 {"error_count", s.error_count}, {"output_crc32", crc}};
  return m_parts.write(index, part);
}

}  // namespace kiln
