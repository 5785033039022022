#include "apps/faces/faces_parts.h"

#include <cstring>

namespace kiln {

namespace {

nlohmann::json counts_json(const FacesPartCounts& c) {
  return {{"images", c.images},     {"unreadable", c.unreadable}, {"images_with_faces", c.images_with_faces},
          {"faces", c.faces},       {"accepted", c.accepted},     {"duplicates", c.duplicates},
          {"written", c.written}};
}

FacesPartCounts counts_from(const nlohmann::json& j) {
  FacesPartCounts c;
  c.images = j.at("images").get<int64_t>();
  c.unreadable = j.at("unreadable").get<int64_t>();
  c.images_with_faces = j.at("images_with_faces").get<int64_t>();
  c.faces = j.at("faces").get<int64_t>();
  c.accepted = j.at("accepted").get<int64_t>();
  c.duplicates = j.at("duplicates").get<int64_t>();
  c.written = j.at("written").get<int64_t>();
  return c;
}

}  // namespace

FacesParts::FacesParts(const std::string& base, int64_t row_floats) : m_parts(base, "faces"), m_row_floats(row_floats) {}

Result<std::vector<FacesPart>> FacesParts::open(const std::string& run, bool resume, std::vector<std::string>* notes) {
  KILN_TRY_ASSIGN(const std::vector<JobPart> kept, m_parts.open(run, resume, notes));
  std::vector<FacesPart> parts;
  for (const JobPart& part : kept) {
    auto faces = from_part(part);
    if (!faces.is_ok()) return Status(faces.status().code(), dir() + ": a part " + faces.status().message());
    parts.push_back(std::move(faces).value());
  }
  return parts;
}

Status FacesParts::write(int64_t index, const FacesPart& part) const {
  JobPart out;
  out.header["first"] = part.first;
  out.header["counts"] = counts_json(part.counts);
  out.header["row_floats"] = m_row_floats;
  out.header["paths"] = part.paths;
  out.header["lines"] = part.lines;
  if (!part.rows.empty()) {
    out.blob.assign(reinterpret_cast<const char*>(part.rows.data()), part.rows.size() * sizeof(float));
  }
  return m_parts.write(index, out);
}

Result<FacesPart> FacesParts::read(int64_t index) const {
  KILN_TRY_ASSIGN(const JobPart part, m_parts.read(index));
  return from_part(part);
}

Result<FacesPart> FacesParts::from_part(const JobPart& in) const {
  FacesPart part;
  try {
    part.first = in.header.at("first").get<int64_t>();
    part.counts = counts_from(in.header.at("counts"));
    part.paths = in.header.at("paths").get<std::vector<std::string>>();
    part.lines = in.header.at("lines").get<std::vector<std::string>>();
    const auto expected = static_cast<size_t>(part.counts.written * m_row_floats) * sizeof(float);
    if (in.header.at("row_floats").get<int64_t>() != m_row_floats || in.blob.size() != expected ||
        part.paths.size() != static_cast<size_t>(part.counts.written)) {
      return unsupported_format("has rows that do not match its header");
    }
  } catch (const nlohmann::json::exception& e) {
    return unsupported_format(std::string("has a bad header: ") + e.what());
  }
  part.rows.resize(in.blob.size() / sizeof(float));
  if (!in.blob.empty()) std::memcpy(part.rows.data(), in.blob.data(), in.blob.size());
  return part;
}

}  // namespace kiln
