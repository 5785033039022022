// The render job's config file: the predecessor's config.yaml, plus any declared setting by name under image:.
#include "kiln/apps/render.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <optional>

namespace kiln {

namespace {

uint8_t unit_to_level(double unit) {
  return static_cast<uint8_t>(std::lround(std::clamp(unit, 0.0, 1.0) * 255.0));
}

const char* node_kind(const YAML::Node& node) {
  return node.IsMap() ? "a mapping" : node.IsSequence() ? "a list" : "a value";
}

// A section (image:, image.resolution: ...) must be a mapping; an absent or empty one is no section.
Status expect_section(const YAML::Node& node, const std::string& key, const std::string& path) {
  if (!node || node.IsNull() || node.IsMap()) return Status::ok();
  return invalid_argument(path + ":" + std::to_string(node.Mark().line + 1) + ": " + key +
                          ": expected a mapping of settings, got " + node_kind(node));
}

// Keys are plain strings; `? [a]: 1` is valid YAML but no setting.
Result<std::string> key_text(const YAML::Node& key, const std::string& section, const std::string& path) {
  if (!key.IsScalar()) {
    return invalid_argument(path + ":" + std::to_string(key.Mark().line + 1) + ": " + section +
                            ": a key must be a name, got " + node_kind(key));
  }
  return key.Scalar();
}

template <typename T>
Status read_scalar(const YAML::Node& node, const std::string& key, const std::string& path, T* out) {
  if (!node || node.IsNull()) return Status::ok();
  if (!node.IsScalar()) {
    return invalid_argument(path + ":" + std::to_string(node.Mark().line + 1) + ": " + key + ": expected a value, got " +
                            node_kind(node));
  }
  try {
    *out = node.as<T>();
  } catch (const YAML::Exception&) {
    return invalid_argument(path + ": " + key + ": expected a " +
                            (std::is_same_v<T, std::string> ? "string" : std::is_same_v<T, bool> ? "boolean" : "number") +
                            ", got '" + node.Scalar() + "'");
  }
  return Status::ok();
}

// A setting under image: by its declared name (the same name as the flag and the Python keyword).
Status apply_declared(const std::string& key, const YAML::Node& node, const std::string& path, RenderJobConfig* c) {
  const std::string what = path + ": image." + key;
  const ParamSet::Entry* entry = render_job_params().find(key);
  std::string text;
  if (node.IsSequence()) {
    for (const auto& item : node) {
      if (!item.IsScalar()) return invalid_argument(what + ": expected a list of values, got a list containing " + node_kind(item));
      if (!text.empty()) text += ',';
      text += item.Scalar();
    }
  } else if (node.IsMap()) {
    return invalid_argument(what + ": expected a value, got a mapping");
  } else {
    text = node.Scalar();
  }
  KILN_TRY_ASSIGN(const ParamValue value, param_parse(entry->spec, text, what));
  return render_job_params().set(*c, key, value, what);
}

Status apply_image_section(const YAML::Node& image, const std::string& path, RenderJobConfig* c,
                           std::vector<std::string>* ignored) {
  KILN_TRY(expect_section(image, "image", path));
  // Declared names first; the predecessor's nested keys below are more specific and win.
  for (const auto& entry : image) {
    KILN_TRY_ASSIGN(const std::string key, key_text(entry.first, "image", path));
    if (key == "resolution" || key == "colors" || key == "rendering" || key == "storage") {
      KILN_TRY(expect_section(entry.second, "image." + key, path));
      continue;
    }
    if (render_job_params().find(key) != nullptr) {
      KILN_TRY(apply_declared(key, entry.second, path, c));
    } else if (ignored != nullptr) {
      ignored->push_back("image." + key);
    }
  }
  if (const auto res = image["resolution"]) {
    KILN_TRY(read_scalar(res["width"], "image.resolution.width", path, &c->render.width));
    KILN_TRY(read_scalar(res["height"], "image.resolution.height", path, &c->render.height));
    KILN_TRY(read_scalar(res["dpi"], "image.resolution.dpi", path, &c->dpi));
  }
  if (const auto colors = image["colors"]) {
    double bullish = -1;
    double bearish = -1;
    KILN_TRY(read_scalar(colors["bullish"], "image.colors.bullish", path, &bullish));
    KILN_TRY(read_scalar(colors["bearish"], "image.colors.bearish", path, &bearish));
    if (bullish >= 0) c->render.ink_bullish = unit_to_level(bullish);
    if (bearish >= 0) c->render.ink_bearish = unit_to_level(bearish);
  }
  if (const auto rendering = image["rendering"]) {
    if (const auto mode = rendering["mode"]) {
      std::string name;
      KILN_TRY(read_scalar(mode, "image.rendering.mode", path, &name));
      KILN_TRY_ASSIGN(c->exec.mode, exec_mode_parse(name));
    }
    KILN_TRY(read_scalar(rendering["gpu_batch_size"], "image.rendering.gpu_batch_size", path, &c->exec.batch_size));
    KILN_TRY(read_scalar(rendering["fallback_on_error"], "image.rendering.fallback_on_error", path,
                         &c->exec.fallback_on_error));
  }
  if (const auto storage = image["storage"]) {
    if (const auto format = storage["format"]) {
      std::string name;
      KILN_TRY(read_scalar(format, "image.storage.format", path, &name));
      if (name == "npz" || name == "zarr") {
        return unsupported_format(path + ": image.storage.format '" + name +
                                  "' is not supported by kiln (use hdf5, npy, png or jpeg)");
      }
      KILN_TRY_ASSIGN(c->output.format, output_format_parse(name));
    }
    std::string mode = "single";
    KILN_TRY(read_scalar(storage["mode"], "image.storage.mode", path, &mode));
    int64_t per_file = 50000;
    KILN_TRY(read_scalar(storage["images_per_file"], "image.storage.images_per_file", path, &per_file));
    if (mode == "batch") {
      c->output.images_per_file = per_file;
    } else if (mode != "single") {
      return invalid_argument(path + ": image.storage.mode: expected single or batch, got '" + mode + "'");
    }
    if (const auto compression = storage["compression"]) {
      std::string name;
      KILN_TRY(read_scalar(compression, "image.storage.compression", path, &name));
      KILN_TRY_ASSIGN(c->output.compression, compression_parse(name));
    }
  }
  return Status::ok();
}

}  // namespace

Status render_config_apply_yaml(const std::string& path, RenderJobConfig* config, std::vector<std::string>* ignored) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return io_error(path + ": cannot read config file");
  } catch (const YAML::Exception& e) {
    return invalid_argument(path + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) return invalid_argument(path + ": config must be a mapping with an 'image' section");
  for (const auto& entry : root) {
    KILN_TRY_ASSIGN(const std::string key, key_text(entry.first, "the top level", path));
    if (key == "image") {
      KILN_TRY(apply_image_section(entry.second, path, config, ignored));
    } else if (ignored != nullptr) {
      ignored->push_back(key);
    }
  }
  return Status::ok();
}

}  // namespace kiln
