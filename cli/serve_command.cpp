// kiln serve: the HTTP server (the crawler's face API, the Open Inference Protocol, /metrics). Options come from
// --config serve.yaml (keys named like the options, without the dashes: port, models, max_body_mb, ...) and then
// the command line, which wins.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#if KILN_HAS_SERVE
#include <yaml-cpp/yaml.h>

#include "kiln/apps/serve.h"
#include "kiln/device.h"
#endif

namespace kiln::cli {

#if KILN_HAS_SERVE
namespace {

struct ServeArgs {
  ServeConfig config;
  std::string config_file;
  std::string models;  // comma-separated
  std::string cors;    // comma-separated
  std::string mode = "auto";
  bool no_faces = false;
};

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

template <typename T>
void yaml_read(const YAML::Node& node, const char* key, T* value) {
  if (node[key]) *value = node[key].as<T>();
}

// A list (or one comma-separated string) as the comma-separated text the options take.
std::string yaml_list(const YAML::Node& node, const char* key, const std::string& fallback) {
  const YAML::Node value = node[key];
  if (!value) return fallback;
  if (!value.IsSequence()) return value.as<std::string>();
  std::string text;
  for (const auto& item : value) text += (text.empty() ? "" : ",") + item.as<std::string>();
  return text;
}

// The file's values, for the options the command line did not give.
Status config_file_apply(const std::string& path, const CLI::App& cmd, ServeArgs* args) {
  YAML::Node node;
  try {
    node = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return invalid_argument("serve: --config " + path + ": " + e.what());
  }
  if (!node.IsMap()) return invalid_argument("serve: --config " + path + ": expected a mapping of option: value");
  ServeArgs from_file = *args;
  ServeConfig& c = from_file.config;
  try {
    yaml_read(node, "host", &c.host);
    yaml_read(node, "port", &c.port);
    yaml_read(node, "grpc_port", &c.grpc_port);
    yaml_read(node, "token", &c.token);
    yaml_read(node, "max_body_mb", &c.max_body_mb);
    yaml_read(node, "instances", &c.instances);
    yaml_read(node, "threads", &c.exec.threads);
    yaml_read(node, "io_threads", &c.threads);
    yaml_read(node, "max_batch", &c.max_batch);
    yaml_read(node, "max_queue_delay_us", &c.max_queue_delay_us);
    yaml_read(node, "max_queue", &c.max_queue);
    yaml_read(node, "timeout", &c.timeout_seconds);
    yaml_read(node, "drain", &c.drain_seconds);
    yaml_read(node, "priority_levels", &c.priority_levels);
    yaml_read(node, "worker_id", &c.worker_id);
    yaml_read(node, "dedup", &c.dedup);
    yaml_read(node, "tls_cert", &c.tls_cert);
    yaml_read(node, "collections_dir", &c.collections_dir);
    yaml_read(node, "tls_key", &c.tls_key);
    yaml_read(node, "mode", &from_file.mode);
    yaml_read(node, "no_faces", &from_file.no_faces);
    yaml_read(node, "segment", &from_file.config.segment);
    from_file.models = yaml_list(node, "models", from_file.models);
    from_file.cors = yaml_list(node, "cors_origins", from_file.cors);
  } catch (const YAML::Exception& e) {
    return invalid_argument("serve: --config " + path + ": " + e.what());
  }
  // The command line wins: take the file's value only where the option was not given.
  const auto given = [&cmd](const char* option) { return cmd.count(option) > 0; };
  ServeConfig& out = args->config;
  if (!given("--host")) out.host = c.host;
  if (!given("--port")) out.port = c.port;
  if (!given("--grpc-port")) out.grpc_port = c.grpc_port;
  if (!given("--token")) out.token = c.token;
  if (!given("--max-body-mb")) out.max_body_mb = c.max_body_mb;
  if (!given("--instances")) out.instances = c.instances;
  if (!given("--threads")) out.exec.threads = c.exec.threads;
  if (!given("--io-threads")) out.threads = c.threads;
  if (!given("--max-batch")) out.max_batch = c.max_batch;
  if (!given("--max-queue-delay-us")) out.max_queue_delay_us = c.max_queue_delay_us;
  if (!given("--max-queue")) out.max_queue = c.max_queue;
  if (!given("--timeout")) out.timeout_seconds = c.timeout_seconds;
  if (!given("--drain")) out.drain_seconds = c.drain_seconds;
  if (!given("--priority-levels")) out.priority_levels = c.priority_levels;
  if (!given("--worker-id")) out.worker_id = c.worker_id;
  if (!given("--dedup")) out.dedup = c.dedup;
  if (!given("--tls-cert")) out.tls_cert = c.tls_cert;
  if (!given("--collections-dir")) out.collections_dir = c.collections_dir;
  if (!given("--tls-key")) out.tls_key = c.tls_key;
  if (!given("--mode")) args->mode = from_file.mode;
  if (!given("--models")) args->models = from_file.models;
  if (!given("--cors-origin")) args->cors = from_file.cors;
  if (!given("--no-faces")) args->no_faces = from_file.no_faces;
  if (!given("--segment")) out.segment = c.segment;
  return Status::ok();
}

}  // namespace

Runner serve_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "Serve the face API, the packaged models (Open Inference Protocol v2) and "
                                          "/metrics over HTTP, batching concurrent requests");
  auto args = std::make_shared<ServeArgs>();
  ServeConfig& c = args->config;
  cmd->add_option("--host", c.host, "Address to bind (0.0.0.0: every interface)")->capture_default_str();
  cmd->add_option("--port", c.port, "Port (0: any free one; the bound one is printed)")->capture_default_str();
#if KILN_HAS_GRPC
  cmd->add_option("--grpc-port", c.grpc_port, "Also serve the Open Inference Protocol over gRPC on this port (0: any "
                                             "free one, printed; -1: off)")->capture_default_str();
#else
  cmd->add_option("--grpc-port", c.grpc_port, "gRPC port (this kiln is built without gRPC)");
#endif
  cmd->add_option("--models", args->models, "Models served over /v2 (comma-separated names from kiln models, or "
                                             ".onnx files), e.g. fr-embed,selfie");
  cmd->add_flag("--no-faces", args->no_faces, "Do not load the face models (no /health, /detect_* or /v1/faces)");
  cmd->add_flag("--segment", c.segment, "Serve POST /v1/segment (person masks by the packaged selfie model)");
  cmd->add_option("--config", args->config_file, "A YAML file of these options (the command line wins)");
  cmd->add_option("--token", c.token, "Require \"Authorization: Bearer TOKEN\" (default: $KILN_SERVE_TOKEN)");
  cmd->add_option("--max-body-mb", c.max_body_mb, "Larger request bodies are refused with 413")->capture_default_str();
  cmd->add_option("--cors-origin", args->cors, "Origins (comma-separated) answered with CORS headers");
  cmd->add_option("--instances", c.instances,
                  "Worker threads per model, each with its own session (0: 1 with a GPU, else one per core up to 4)")
      ->capture_default_str();
  cmd->add_option("--threads", c.exec.threads, "CPU threads of each instance (0: all cores, or their share with --instances 0)")
      ->capture_default_str();
  cmd->add_option("--io-threads", c.threads, "HTTP I/O threads")->capture_default_str();
  cmd->add_option("--max-batch", c.max_batch, "Images (faces) or requests (models) per batch")->capture_default_str();
  cmd->add_option("--max-queue-delay-us", c.max_queue_delay_us, "A smaller batch leaves once its oldest item "
                                                                 "waited this long")->capture_default_str();
  cmd->add_option("--max-queue", c.max_queue, "Queued items per model before 429")->capture_default_str();
  cmd->add_option("--timeout", c.timeout_seconds, "Seconds a request may wait in the queue before 504")
      ->capture_default_str();
  cmd->add_option("--priority-levels", c.priority_levels, "Levels of the kiln-priority header (1 first); requests "
                                                         "without it get the middle one")->capture_default_str();
  cmd->add_option("--drain", c.drain_seconds, "Seconds given to queued requests on SIGTERM/SIGINT")
      ->capture_default_str();
  cmd->add_option("--tls-cert", c.tls_cert,
                  "PEM certificate (chain): serve HTTPS and WSS on --port, and TLS on --grpc-port (with --tls-key)");
  cmd->add_option("--tls-key", c.tls_key, "PEM private key of --tls-cert");
  cmd->add_option("--collections-dir", c.collections_dir,
                  "Keep each face collection as a `kiln faces` output DIR/NAME.h5 (read back at start)");
  cmd->add_option("--dedup", c.dedup,
                  "POST /v1/faces?collection=: a face whose cosine to one in the collection is at least this is its "
                  "duplicate, not added (0: off)")
      ->capture_default_str();
  cmd->add_option("--face-min-score", c.face_min_score, "The face detector's threshold (requests filter further)")
      ->capture_default_str();
  cmd->add_option("--worker-id", c.worker_id, "worker_id in the crawler API's answers")->capture_default_str();
  cmd->add_option("--mode", args->mode, "auto | gpu | cpu")->capture_default_str();
  cmd->add_flag("-q,--quiet", c.quiet, "No access log");
  return [cmd, args] {
    if (!args->config_file.empty()) {
      if (Status s = config_file_apply(args->config_file, *cmd, args.get()); !s.is_ok()) return exit_with(s);
    }
    ServeConfig config = args->config;
    if (config.token.empty()) {
      if (const char* token = std::getenv("KILN_SERVE_TOKEN")) config.token = token;
    }
    config.models = comma_list(args->models);
    config.cors_origins = comma_list(args->cors);
    config.faces = !args->no_faces;
    auto mode = exec_mode_parse(args->mode);
    if (!mode.is_ok()) return exit_with(mode.status());
    config.exec.mode = mode.value();
    const LogFn log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    return exit_with(serve_run(config, log));
  };
}
#else
Runner serve_command_add(CLI::App& app) {
  app.add_subcommand("serve", "Serve models over HTTP (this kiln is built without ONNX Runtime, faiss or Boost)")
      ->allow_extras();
  return [] {
    return exit_with(Status(Errc::kNotImplemented,
                            "this kiln is built without ONNX Runtime, faiss or Boost.Beast (see make deps)"));
  };
}
#endif

}  // namespace kiln::cli
