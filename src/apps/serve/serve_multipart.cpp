#include "apps/serve/serve_multipart.h"

#include <algorithm>
#include <cctype>

namespace kiln::serve {

namespace {

std::string multipart_lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string multipart_trim(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
  while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
  return text.substr(begin, end - begin);
}

// The value of `key` among a header's ;-separated parameters (quoted or not); "" when absent.
std::string multipart_parameter(const std::string& header, const std::string& key) {
  size_t at = 0;
  while ((at = header.find(';', at)) != std::string::npos) {
    ++at;
    while (at < header.size() && (header[at] == ' ' || header[at] == '\t')) ++at;
    const size_t equals = header.find('=', at);
    if (equals == std::string::npos) return {};
    if (multipart_lower(multipart_trim(header.substr(at, equals - at))) != key) continue;
    size_t value = equals + 1;
    if (value < header.size() && header[value] == '"') {
      std::string out;
      for (size_t i = value + 1; i < header.size() && header[i] != '"'; ++i) {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        out += header[i];
      }
      return out;
    }
    const size_t end = std::min(header.find(';', value), header.size());
    return multipart_trim(header.substr(value, end - value));
  }
  return {};
}

}  // namespace

bool multipart_is(const std::string& content_type) {
  return multipart_lower(content_type).rfind("multipart/form-data", 0) == 0;
}

Result<std::vector<MultipartPart>> multipart_parse(const std::string& content_type, const std::string& body) {
  if (!multipart_is(content_type)) return invalid_argument("multipart: the Content-Type is not multipart/form-data");
  const std::string boundary = multipart_parameter(content_type, "boundary");
  if (boundary.empty() || boundary.size() > 200) {
    return invalid_argument("multipart: the Content-Type names no boundary (or one over 200 characters)");
  }
  const std::string delimiter = "--" + boundary;
  size_t at = 0;
  if (body.compare(0, delimiter.size(), delimiter) != 0) {
    at = body.find("\r\n" + delimiter);  // a preamble before the first delimiter
    if (at == std::string::npos) return invalid_argument("multipart: the body holds no \"" + delimiter + "\"");
    at += 2;
  }
  std::vector<MultipartPart> parts;
  for (;;) {
    at += delimiter.size();
    if (body.compare(at, 2, "--") == 0) break;  // the closing delimiter
    while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;
    if (body.compare(at, 2, "\r\n") != 0) return invalid_argument("multipart: a delimiter is not followed by CRLF");
    at += 2;
    const size_t headers_end = body.find("\r\n\r\n", at);
    const size_t blank = body.compare(at, 2, "\r\n") == 0 ? at : std::string::npos;  // a part without headers
    if (headers_end == std::string::npos && blank == std::string::npos) {
      return invalid_argument("multipart: part " + std::to_string(parts.size() + 1) + " has no end of its headers");
    }
    MultipartPart part;
    const size_t data_begin = blank != std::string::npos ? blank + 2 : headers_end + 4;
    size_t line = at;
    while (blank == std::string::npos && line < headers_end + 2) {
      const size_t end = body.find("\r\n", line);
      const std::string header = body.substr(line, end - line);
      line = end + 2;
      const size_t colon = header.find(':');
      if (colon == std::string::npos) continue;
      const std::string name = multipart_lower(multipart_trim(header.substr(0, colon)));
      const std::string value = multipart_trim(header.substr(colon + 1));
      if (name == "content-disposition") {
        part.name = multipart_parameter(value, "name");
        part.filename = multipart_parameter(value, "filename");
      } else if (name == "content-type") {
        part.content_type = value;
      }
    }
    const size_t data_end = body.find("\r\n" + delimiter, data_begin);
    if (data_end == std::string::npos) {
      return invalid_argument("multipart: part " + std::to_string(parts.size() + 1) + " has no closing delimiter");
    }
    part.data = body.substr(data_begin, data_end - data_begin);
    parts.push_back(std::move(part));
    at = data_end + 2;
  }
  return parts;
}

}  // namespace kiln::serve
