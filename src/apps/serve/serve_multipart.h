// multipart/form-data bodies (RFC 7578) as POST /v1/faces takes them: the parts with their names, file names and
// bytes. Free of Boost; fuzzable alone.
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::serve {

struct MultipartPart {
  std::string name;          // Content-Disposition's name
  std::string filename;      // its filename, "" when none
  std::string content_type;  // the part's Content-Type, "" when none
  std::string data;
};

// True for a Content-Type of multipart/form-data.
bool multipart_is(const std::string& content_type);

// The parts of `body`, whose boundary the Content-Type names; InvalidArgument saying what is wrong (no boundary, a
// part without its headers' end, no closing delimiter).
Result<std::vector<MultipartPart>> multipart_parse(const std::string& content_type, const std::string& body);

}  // namespace kiln::serve
