// _kiln.serve_start: `kiln serve` on background threads of this process (kiln.serve's default). The options are the
// command's, named without dashes; the server never takes the GIL, and its log lines are kept for Server.stderr().
#include <Python.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings.h"
#include "errors.h"
#include "kiln/apps/serve.h"
#include "kiln/device.h"

namespace kiln::py {

namespace pyb = pybind11;

namespace {

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

struct LogLines {
  std::mutex mutex;
  std::vector<std::string> lines;
};

struct PyServer {
  std::shared_ptr<LogLines> log = std::make_shared<LogLines>();
  std::unique_ptr<ServeInstance> instance;

  void stop() {
    if (!instance) return;
    pyb::gil_scoped_release release;  // the drain waits for requests, which take no GIL
    instance->stop();
  }
  ~PyServer() {
    if (!instance) return;
    if (interpreter_finalizing()) {
      instance->stop();
    } else {
      stop();
    }
  }
};

std::string text_of(const pyb::handle& value) {
  return pyb::str(pyb::module_::import("os").attr("fspath")(value)).cast<std::string>();
}

// A list of names, or one comma-separated string.
std::vector<std::string> names_of(const pyb::handle& value) {
  std::vector<std::string> names;
  if (pyb::isinstance<pyb::str>(value)) {
    const std::string text = value.cast<std::string>();
    size_t begin = 0;
    while (begin <= text.size()) {
      const size_t end = std::min(text.find(',', begin), text.size());
      if (end > begin) names.push_back(text.substr(begin, end - begin));
      begin = end + 1;
    }
    return names;
  }
  for (const pyb::handle item : value) names.push_back(text_of(item));
  return names;
}

void option_apply(ServeConfig* c, const std::string& key, const pyb::handle& value) {
  if (key == "host") c->host = text_of(value);
  else if (key == "port") c->port = value.cast<int32_t>();
  else if (key == "grpc_port") c->grpc_port = value.cast<int32_t>();
  else if (key == "models") c->models = names_of(value);
  else if (key == "no_faces") c->faces = !value.cast<bool>();
  else if (key == "segment") c->segment = value.cast<bool>();
  else if (key == "token") c->token = text_of(value);
  else if (key == "tls_cert") c->tls_cert = text_of(value);
  else if (key == "tls_key") c->tls_key = text_of(value);
  else if (key == "max_body_mb") c->max_body_mb = value.cast<double>();
  else if (key == "cors_origin") c->cors_origins = names_of(value);
  else if (key == "instances") c->instances = value.cast<int32_t>();
  else if (key == "threads") c->exec.threads = value.cast<int32_t>();
  else if (key == "io_threads") c->threads = value.cast<int32_t>();
  else if (key == "max_batch") c->max_batch = value.cast<int32_t>();
  else if (key == "max_queue_delay_us") c->max_queue_delay_us = value.cast<int64_t>();
  else if (key == "max_queue") c->max_queue = value.cast<int64_t>();
  else if (key == "timeout") c->timeout_seconds = value.cast<double>();
  else if (key == "priority_levels") c->priority_levels = value.cast<int32_t>();
  else if (key == "drain") c->drain_seconds = value.cast<double>();
  else if (key == "collections_dir") c->collections_dir = text_of(value);
  else if (key == "dedup") c->dedup = value.cast<double>();
  else if (key == "face_min_score") c->face_min_score = value.cast<double>();
  else if (key == "worker_id") c->worker_id = text_of(value);
  else if (key == "quiet") c->quiet = value.cast<bool>();
  else if (key == "mode") {
    auto mode = exec_mode_parse(text_of(value));
    status_check(mode.status());
    c->exec.mode = mode.value();
  } else if (key == "config") {
    raise_value_error("kiln.serve: config= (a YAML file) is read by the kiln program: give process=True, or the "
                      "options as keywords");
  } else {
    raise_value_error("kiln.serve: unknown option " + key + " (the options are kiln serve's, without dashes: "
                      "max_batch=8, no_faces=True, ...)");
  }
}

std::unique_ptr<PyServer> serve_start_py(const pyb::dict& options) {
  ServeConfig config;
  for (const auto& [key, value] : options) {
    if (value.is_none()) continue;
    option_apply(&config, key.cast<std::string>(), value);
  }
  auto server = std::make_unique<PyServer>();
  std::shared_ptr<LogLines> log = server->log;
  const LogFn log_fn = [log](const std::string& line) {
    std::lock_guard<std::mutex> lock(log->mutex);
    log->lines.push_back(line);
  };
  Result<std::unique_ptr<ServeInstance>> started = std::unique_ptr<ServeInstance>();
  {
    pyb::gil_scoped_release release;  // the models load here
    started = ServeInstance::start(config, log_fn);
  }
  if (!started.is_ok()) {
    std::string message = started.status().message();
    std::lock_guard<std::mutex> lock(log->mutex);
    for (const std::string& line : log->lines) message += "\n  " + line;
    status_check(Status(started.status().code(), message));
  }
  server->instance = std::move(started).value();
  return server;
}

}  // namespace

void serve_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  pyb::class_<PyServer>(m, "ServeInstance", "kiln serve on background threads of this process (kiln.serve)")
      .def_property_readonly("port", [](const PyServer& s) { return s.instance->port(); })
      .def_property_readonly("grpc_port", [](const PyServer& s) { return s.instance->grpc_port(); },
                             "-1 without grpc_port=")
      .def_property_readonly("running", [](const PyServer& s) { return s.instance->running(); })
      .def("stop", &PyServer::stop, "As SIGTERM to kiln serve: answers what is queued (within drain=), then returns")
      .def("log_lines", [](PyServer& s) {
        std::lock_guard<std::mutex> lock(s.log->mutex);
        return s.log->lines;
      });
  m.def("serve_start", &serve_start_py, "options"_a,
        R"doc(Start kiln serve on background threads (the models load first); options are the command's, named
without dashes (port=0, models=[...], no_faces=True, tls_cert=..., grpc_port=0, ...). An error in the options or
binding the address raises. Use kiln.serve(), which wraps it.)doc");
}

}  // namespace kiln::py
