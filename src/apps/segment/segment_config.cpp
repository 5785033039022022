// The predecessor's configs/gpu_config.yaml for kiln segment: each key it has is either applied to the job's
// settings or named in a note saying how kiln handles it, so that nothing in the file is silently ignored.
#include <yaml-cpp/yaml.h>

#include <sstream>

#include "kiln/apps/segment.h"

namespace kiln {

namespace {

template <typename T>
Result<T> scalar(const YAML::Node& node, const std::string& key) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    return invalid_argument("config " + key + ": expected " +
                            (std::is_same_v<T, bool> ? "true or false" : std::is_same_v<T, std::string> ? "text" : "a number"));
  }
}

// node[a][b]..., or an undefined node.
YAML::Node at(const YAML::Node& root, std::initializer_list<const char*> path) {
  YAML::Node node = YAML::Clone(root);
  for (const char* key : path) {
    if (!node.IsMap() || !node[key]) return YAML::Node(YAML::NodeType::Undefined);
    node = node[key];
  }
  return node;
}

std::string dims_text(const YAML::Node& node) {
  std::string text;
  if (!node.IsSequence()) return text;
  for (const auto& d : node) text += (text.empty() ? "" : "x") + (d.IsScalar() ? d.Scalar() : std::string("?"));
  return text;
}

// root by value: yaml-cpp's const operator[] gives an invalid node for a missing key, the non-const one an empty one.
Status sections_apply(YAML::Node root, SegmentJobConfig* config, std::vector<std::string>* notes);

}  // namespace

Status segment_config_apply_yaml(const std::string& path, SegmentJobConfig* config, std::vector<std::string>* notes) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return io_error(path + ": cannot read the config file");
  } catch (const YAML::Exception& e) {
    return invalid_argument(path + ": not valid YAML: " + e.what());
  }
  if (!root.IsMap()) return invalid_argument(path + ": expected a mapping of sections");
  // Every value is read through scalar<T>() with its key named; a node of a shape nothing expected (a list where a
  // name was, a mapping as a key) still ends as this one line, never as an exception out of kiln.
  try {
    return sections_apply(root, config, notes);
  } catch (const YAML::Exception& e) {
    return invalid_argument(path + ": a section or key of an unexpected shape (" + std::string(e.what()) + ")");
  }
}

namespace {

Status sections_apply(YAML::Node root, SegmentJobConfig* config, std::vector<std::string>* notes) {
  const auto note = [&](const std::string& text) { notes->push_back("config: " + text); };

  if (YAML::Node n = at(root, {"batching", "dynamic"}); n.IsMap()) {
    bool enabled = true;
    if (n["enabled"]) {
      KILN_TRY_ASSIGN(enabled, scalar<bool>(n["enabled"], "batching.dynamic.enabled"));
    }
    if (n["max_batch_size"]) {
      KILN_TRY_ASSIGN(config->exec.batch_size, scalar<int64_t>(n["max_batch_size"], "batching.dynamic.max_batch_size"));
    }
    if (!enabled) config->exec.batch_size = 1;
    if (n["timeout_ms"]) {
      KILN_TRY_ASSIGN(const double ms, scalar<double>(n["timeout_ms"], "batching.dynamic.timeout_ms"));
      config->max_delay_us = static_cast<int64_t>(ms * 1000);
    }
    note("batching.dynamic -> batch_size " + std::to_string(config->exec.batch_size) + ", max_delay_us " +
         std::to_string(config->max_delay_us));
  }
  if (at(root, {"batching", "adaptive"}).IsDefined()) {
    note("batching.adaptive: kiln halves a GPU batch that runs out of memory and keeps the smaller size");
  }
  if (at(root, {"batching", "priority"}).IsDefined()) note("batching.priority: latency inputs always go first");

  if (YAML::Node t = root["tensorrt"]; t.IsMap()) {
    config->provider = "tensorrt";
    if (YAML::Node p = at(t, {"precision", "fp16"}); p.IsDefined()) {
      KILN_TRY_ASSIGN(config->tensorrt.fp16, scalar<bool>(p, "tensorrt.precision.fp16"));
    }
    if (YAML::Node p = at(t, {"precision", "int8"}); p.IsDefined()) {
      KILN_TRY_ASSIGN(config->tensorrt.int8, scalar<bool>(p, "tensorrt.precision.int8"));
    }
    bool cache = true;
    if (YAML::Node c = at(t, {"cache", "enabled"}); c.IsDefined()) {
      KILN_TRY_ASSIGN(cache, scalar<bool>(c, "tensorrt.cache.enabled"));
    }
    if (YAML::Node d = at(t, {"cache", "directory"}); d.IsDefined() && cache) {
      KILN_TRY_ASSIGN(config->tensorrt.engine_cache_dir, scalar<std::string>(d, "tensorrt.cache.directory"));
      config->tensorrt.timing_cache_dir = config->tensorrt.engine_cache_dir;
    }
    std::string shapes = dims_text(at(t, {"dynamic_shapes", "input_shapes", "min"}));
    if (!shapes.empty()) {
      note("tensorrt.dynamic_shapes (" + shapes + " ...): kiln builds the optimization profile from the model's "
           "input size and the batch sizes it runs");
    }
    note(std::string("tensorrt -> provider tensorrt, fp16 ") + (config->tensorrt.fp16 ? "on" : "off") + ", int8 " +
         (config->tensorrt.int8 ? "on" : "off") +
         (config->tensorrt.engine_cache_dir.empty() ? "" : ", engine cache " + config->tensorrt.engine_cache_dir) +
         " (used where a GPU with TensorRT exists; otherwise CUDA, then the CPU, as reported)");
  }
  if (YAML::Node s = at(root, {"strategies", "priority"}); s.IsDefined()) {
    KILN_TRY_ASSIGN(const std::string priority, scalar<std::string>(s, "strategies.priority"));
    if (priority != "latency" && priority != "throughput") {
      return invalid_argument("config strategies.priority: expected latency or throughput, not " + priority);
    }
    config->pipeline = priority;
    note("strategies.priority -> pipeline " + priority);
  }
  if (YAML::Node d = at(root, {"debug", "fallback_to_cpu"}); d.IsDefined()) {
    KILN_TRY_ASSIGN(config->exec.fallback_on_error, scalar<bool>(d, "debug.fallback_to_cpu"));
  }
  if (YAML::Node t = root["targets"]; t.IsMap()) {
    SegmentTargets& g = config->targets;
    if (YAML::Node n = at(t, {"latency", "max_end_to_end_ms"}); n.IsDefined()) {
      KILN_TRY_ASSIGN(g.max_end_to_end_ms, scalar<double>(n, "targets.latency.max_end_to_end_ms"));
    }
    if (YAML::Node n = at(t, {"throughput", "min_fps"}); n.IsDefined()) {
      KILN_TRY_ASSIGN(g.min_fps, scalar<double>(n, "targets.throughput.min_fps"));
    }
    if (YAML::Node n = at(t, {"throughput", "target_fps"}); n.IsDefined()) {
      KILN_TRY_ASSIGN(g.target_fps, scalar<double>(n, "targets.throughput.target_fps"));
    }
    if (YAML::Node n = at(t, {"quality", "min_iou"}); n.IsDefined()) {
      KILN_TRY_ASSIGN(g.min_iou, scalar<double>(n, "targets.quality.min_iou"));
    }
    if (at(t, {"latency", "max_inference_ms"}).IsDefined()) {
      note("targets.latency per stage: the summary reports each stage's busy share instead");
    }
  }
  if (YAML::Node p = at(root, {"pipeline", "stages", "preprocess", "target_size"}); p.IsDefined()) {
    note("pipeline.stages.preprocess.target_size " + dims_text(p) + ": the model's own input size is used");
  }
  // The predecessor bounded each stage's queue (queue_size) and all of them together (backpressure.max_queue_depth):
  // kiln has one bound, the frames in flight; the whole pipeline's wins, else the largest stage's.
  int64_t queue = 0;
  std::string queue_key;
  if (YAML::Node stages = at(root, {"pipeline", "stages"}); stages.IsMap()) {
    for (const auto& stage : stages) {
      if (!stage.second.IsMap() || !stage.second["queue_size"]) continue;
      const std::string key =
          "pipeline.stages." + (stage.first.IsScalar() ? stage.first.Scalar() : std::string("?")) + ".queue_size";
      KILN_TRY_ASSIGN(const int64_t size, scalar<int64_t>(stage.second["queue_size"], key));
      if (size > queue) queue = size, queue_key = key;
    }
  }
  if (YAML::Node depth = at(root, {"pipeline", "backpressure", "max_queue_depth"}); depth.IsDefined()) {
    KILN_TRY_ASSIGN(queue, scalar<int64_t>(depth, "pipeline.backpressure.max_queue_depth"));
    queue_key = "pipeline.backpressure.max_queue_depth";
  }
  if (!queue_key.empty()) {
    if (queue < 1) return invalid_argument("config " + queue_key + ": expected at least 1");
    config->queue_size = queue;
    note(queue_key + " -> queue_size " + std::to_string(queue) + " (frames in flight at most)");
  }
  if (root["pipeline"]) note("pipeline stages' threads and streams: kiln sizes them (one reader and writer per input)");
  if (root["memory"]) note("memory: set GPU_MEMORY_LIMIT_GB for a VRAM limit; kiln's pools reuse their buffers");
  if (root["cuda"]) note("cuda: kiln chooses its own launch geometry and streams");
  if (root["profiling"]) note("profiling: use kiln --trace FILE (Perfetto) and --profile");
  static const char* known[] = {"hardware", "cuda",     "tensorrt",  "memory", "batching", "pipeline",
                                "threading", "profiling", "targets", "strategies", "debug"};
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "(a key that is not a name)";
    if (std::find(std::begin(known), std::end(known), key) == std::end(known)) note("unknown section " + key + " ignored");
  }
  return Status::ok();
}

}  // namespace

}  // namespace kiln
