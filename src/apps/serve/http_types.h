// The server's view of HTTP, free of Boost: what a route reads and answers. The Beast/Asio core (http_server.cpp)
// converts to and from these, so that route and parsing code compiles without Boost's headers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln::serve {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // the target without its query
  std::string query;
  std::map<std::string, std::string> headers;  // names lowercase
  std::string body;

  std::string header(const std::string& lowercase_name) const {
    const auto it = headers.find(lowercase_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones (Retry-After, kiln-batch-size, ...)
  std::string route;  // the route pattern it answered, for /metrics ("/v2/models/{name}/infer"); "" = not found
};

// How a request asks to be scheduled (headers kiln-priority and kiln-timeout-ms): level 1 is the highest, 0 the
// server's default; timeout_us 0 = the server's --timeout (a request may only lower it).
struct Scheduling {
  int32_t priority = 0;
  int64_t timeout_us = 0;
};

// Answers a request exactly once, from any thread.
using Responder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpRequest, Responder)>;

// {"error": message} with `status`.
HttpResponse http_error(int status, const std::string& message);
HttpResponse http_json(int status, std::string body);

}  // namespace kiln::serve
