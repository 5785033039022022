#include "apps/serve/serve_routes.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace kiln::serve {

namespace {

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t begin = 1;
  while (begin <= path.size()) {
    const size_t end = std::min(path.find('/', begin), path.size());
    out.push_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

bool route_match(const std::string& pattern, const std::vector<std::string>& path, RouteParams* params) {
  const std::vector<std::string> parts = segments(pattern);
  if (parts.size() != path.size()) return false;
  RouteParams captured;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.size() > 2 && part.front() == '{' && part.back() == '}') {
      if (path[i].empty()) return false;
      captured[part.substr(1, part.size() - 2)] = path[i];
    } else if (part != path[i]) {
      return false;
    }
  }
  *params = std::move(captured);
  return true;
}

void metrics_routes_add(ServeContext& context, std::vector<Route>* routes) {
  routes->push_back({"GET", "/metrics", [&context](const HttpRequest&, const RouteParams&, Responder respond) {
                       HttpResponse response;
                       response.content_type = "text/plain; version=0.0.4; charset=utf-8";
                       response.body = context.metrics.text();
                       respond(std::move(response));
                     }});
}

}  // namespace

ModelService* ServeContext::model_find(const std::string& name) const {
  for (const auto& model : models) {
    if (model->name() == name) return model.get();
  }
  return nullptr;
}

Responder route_responder(const std::string& pattern, Responder respond) {
  return [pattern, respond = std::move(respond)](HttpResponse response) {
    response.route = pattern;
    respond(std::move(response));
  };
}

std::string query_value(const std::string& query, const std::string& key) {
  size_t begin = 0;
  while (begin < query.size()) {
    const size_t end = std::min(query.find('&', begin), query.size());
    const size_t equals = query.find('=', begin);
    const size_t name_end = std::min(equals, end);
    if (query.compare(begin, name_end - begin, key) == 0 && name_end - begin == key.size()) {
      std::string value;
      for (size_t i = name_end + 1; i < end; ++i) {
        const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
        if (query[i] == '%' && i + 2 < end + 0 && hex(query[i + 1]) && hex(query[i + 2])) {
          value += static_cast<char>(std::strtol(query.substr(i + 1, 2).c_str(), nullptr, 16));
          i += 2;
        } else {
          value += query[i] == '+' ? ' ' : query[i];
        }
      }
      return value;
    }
    begin = end + 1;
  }
  return {};
}

Result<Scheduling> request_scheduling(const HttpRequest& request, int32_t levels) {
  Scheduling scheduling;
  const std::string priority = request.header("kiln-priority");
  if (!priority.empty()) {
    char* end = nullptr;
    const long value = std::strtol(priority.c_str(), &end, 10);
    if (*end != '\0' || value < 1 || value > levels) {
      return invalid_argument("kiln-priority: expected 1 (highest) .. " + std::to_string(levels) + ", got " + priority);
    }
    scheduling.priority = static_cast<int32_t>(value);
  }
  const std::string timeout = request.header("kiln-timeout-ms");
  if (!timeout.empty()) {
    char* end = nullptr;
    const double ms = std::strtod(timeout.c_str(), &end);
    if (*end != '\0' || !(ms > 0) || ms > 1e9) {
      return invalid_argument("kiln-timeout-ms: expected a positive number of milliseconds, got " + timeout);
    }
    scheduling.timeout_us = std::max<int64_t>(1, static_cast<int64_t>(ms * 1000));
  }
  return scheduling;
}

void batch_headers_add(HttpResponse* response, int32_t batch_size, int64_t queue_ns) {
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.3f", static_cast<double>(queue_ns) * 1e-6);
  response->headers.emplace_back("kiln-batch-size", std::to_string(batch_size));
  response->headers.emplace_back("kiln-queue-ms", ms);
}

HttpHandler serve_router(ServeContext& context) {
  auto routes = std::make_shared<std::vector<Route>>();
  if (context.faces) face_routes_add(context, routes.get());
  if (context.faces) collection_routes_add(context, routes.get());
  oip_routes_add(context, routes.get());
  segment_routes_add(context, routes.get());
  metrics_routes_add(context, routes.get());
  page_routes_add(context, routes.get());
  return [routes](HttpRequest request, Responder respond) {
    const std::vector<std::string> path = segments(request.path);
    bool path_known = false;
    for (const Route& route : *routes) {
      RouteParams params;
      if (!route_match(route.pattern, path, &params)) continue;
      path_known = true;
      if (route.method != request.method) continue;
      return route.handler(request, params, route_responder(route.pattern, std::move(respond)));
    }
    HttpResponse response = path_known ? http_error(405, request.method + " is not allowed on " + request.path)
                                       : http_error(404, "no such endpoint: " + request.path);
    response.route = path_known ? "(method not allowed)" : "(no route)";
    respond(std::move(response));
  };
}

}  // namespace kiln::serve
