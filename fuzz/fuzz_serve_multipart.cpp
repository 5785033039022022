// kiln serve's multipart/form-data bodies (POST /v1/faces) and query strings: the input's first line is the
// Content-Type (its boundary), the rest the body, also read as a query. Every input is answered with the parts or a
// reason, never a crash.
#include <string>

#include "apps/serve/serve_multipart.h"
#include "apps/serve/serve_routes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string content_type = newline == std::string::npos ? input : input.substr(0, newline);
  const std::string body = newline == std::string::npos ? std::string() : input.substr(newline + 1);
  auto parts = kiln::serve::multipart_parse(content_type, body);
  if (parts.is_ok()) {
    size_t bytes = 0;
    for (const auto& part : parts.value()) bytes += part.data.size() + part.name.size() + part.filename.size();
    if (bytes > body.size()) __builtin_trap();  // parts are pieces of the body
  }
  (void)kiln::serve::multipart_parse("multipart/form-data; boundary=kiln", input);
  (void)kiln::serve::query_value(input, "collection");
  return 0;
}
