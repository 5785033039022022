#include "apps/render/render_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>

namespace kiln {

namespace {

uint8_t unit_to_level(double unit) {
  return static_cast<uint8_t>(std::lround(std::clamp(unit, 0.0, 1.0) * 255.0));
}

template <typename T>
Status read_scalar(const YAML::Node& node, const std::string& key, const std::string& path, T* out) {
  if (!node || node.IsNull()) return Status::ok();
  try {
    *out = node.as<T>();
  } catch (const YAML::Exception&) {
    return invalid_argument(path + ": " + key + ": expected a " +
                            (std::is_same_v<T, std::string> ? "string" : std::is_same_v<T, bool> ? "boolean" : "number") +
                            ", got '" + node.Scalar() + "'");
  }
  return Status::ok();
}

Status apply_image_section(const YAML::Node& image, const std::string& path, RenderJobConfig* c) {
  KILN_TRY(read_scalar(image["seq_len"], "image.seq_len", path, &c->windows.seq_len));
  KILN_TRY(read_scalar(image["stride"], "image.stride", path, &c->windows.stride));
  KILN_TRY(read_scalar(image["line_width"], "image.line_width", path, &c->render.line_width));
  if (const auto res = image["resolution"]) {
    KILN_TRY(read_scalar(res["width"], "image.resolution.width", path, &c->render.width));
    KILN_TRY(read_scalar(res["height"], "image.resolution.height", path, &c->render.height));
    KILN_TRY(read_scalar(res["dpi"], "image.resolution.dpi", path, &c->dpi));
  }
  if (const auto style = image["style"]) {
    std::string name;
    KILN_TRY(read_scalar(style, "image.style", path, &name));
    KILN_TRY_ASSIGN(c->render.style, chart_style_parse(name));
  }
  if (const auto dtype = image["dtype"]) {
    std::string name;
    KILN_TRY(read_scalar(dtype, "image.dtype", path, &name));
    if (name == "float32") {
      c->render.dtype = PixelType::kF32;
    } else if (name == "uint8") {
      c->render.dtype = PixelType::kU8;
    } else {
      return invalid_argument(path + ": image.dtype: expected uint8 or float32, got '" + name + "'");
    }
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
      KILN_TRY_ASSIGN(c->mode, exec_mode_parse(name));
    }
    KILN_TRY(read_scalar(rendering["gpu_batch_size"], "image.rendering.gpu_batch_size", path, &c->batch_size));
    KILN_TRY(read_scalar(rendering["fallback_on_error"], "image.rendering.fallback_on_error", path,
                         &c->fallback_on_error));
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

bool parse_int(const char* text, int64_t* out) {
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, *out);
  return ec == std::errc() && ptr == end;
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
    const std::string key = entry.first.as<std::string>();
    if (key == "image") {
      KILN_TRY(apply_image_section(entry.second, path, config));
    } else if (ignored != nullptr) {
      ignored->push_back(key);
    }
  }
  return Status::ok();
}

Status render_config_apply_env(RenderJobConfig* config, const EnvLookup& lookup) {
  KILN_TRY(exec_env_apply(OpKind::kRender, &config->mode, &config->gpu_only, &config->notes, lookup));
  if (const char* batch = lookup("GPU_BATCH_SIZE"); batch != nullptr && *batch != '\0') {
    int64_t value = 0;
    if (!parse_int(batch, &value) || value < 1) return invalid_argument("GPU_BATCH_SIZE='" + std::string(batch) + "': expected a positive integer");
    config->batch_size = value;
  }
  if (const char* threads = lookup("KILN_THREADS"); threads != nullptr && *threads != '\0') {
    int64_t value = 0;
    if (!parse_int(threads, &value) || value < 0) return invalid_argument("KILN_THREADS='" + std::string(threads) + "': expected a non-negative integer");
    config->threads = static_cast<int32_t>(value);
  }
  return Status::ok();
}

}  // namespace kiln
