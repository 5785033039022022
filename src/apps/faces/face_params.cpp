// The face settings, declared once for `kiln faces`, its config and kiln.faces (the thresholds keep the
// predecessor's names).
#include <nlohmann/json.hpp>

#include "kiln/apps/faces.h"

namespace kiln {

const ParamTable<FaceSettings>& face_params() {
  static const ParamTable<FaceSettings> table = [] {
    using C = FaceSettings;
    ParamTable<C> t;
    t.add_string_choice({.name = "detector",
                         .help = "blazeface (back model, 256 px, small and distant faces), blazeface-front (128 px, "
                                 "near frontal faces) or ultraface (UltraFace-320 layout, no landmarks)",
                         .choices = {"blazeface", "blazeface-front", "ultraface"}},
                        [](C& c) -> std::string& { return c.detector; });
    t.add({.name = "min_score", .help = "Detection score threshold", .min = 0, .max = 1},
          [](C& c) -> float& { return c.min_score; });
    t.add({.name = "nms_iou", .help = "Overlap above which detections are merged", .min = 0, .max = 1},
          [](C& c) -> float& { return c.nms_iou; });
    t.add_string_choice({.name = "small_faces",
                         .help = "Also search overlapping tiles so that faces of min_face_size pixels are found: auto "
                                 "(photos over 2048 px), on, off",
                         .choices = {"auto", "on", "off"}},
                        [](C& c) -> std::string& { return c.small_faces; });
    t.add_string_choice({.name = "upscale",
                         .help = "Small photos upscaled (smaller side <= 150: 4x, <= 250: 3x, <= 600: 2x): auto (a "
                                 "second pass over those in which the photo as it is showed no face), always "
                                 "(before the only pass), off",
                         .choices = {"auto", "always", "off"}},
                        [](C& c) -> std::string& { return c.upscale; });
    t.add_string_choice({.name = "enhance",
                         .help = "Contrast x1.15, sharpness x1.1 and an unsharp mask: auto (below 500 x 400, with "
                                 "upscale's second pass), off, always (every photo, before the only pass)",
                         .choices = {"auto", "off", "always"}},
                        [](C& c) -> std::string& { return c.enhance; });
    t.add({.name = "min_face_quality", .help = "Accept faces with at least this detection score", .min = 0, .max = 1},
          [](C& c) -> double& { return c.thresholds.min_face_quality; });
    t.add({.name = "min_face_size", .help = "Accept faces whose box is at least this many pixels on its shorter side",
           .min = 1, .max = 1 << 16},
          [](C& c) -> int32_t& { return c.thresholds.min_face_size; });
    t.add({.name = "blur_min_variance", .help = "Accept faces with at least this Laplacian variance", .min = 0},
          [](C& c) -> double& { return c.thresholds.blur_min_variance; });
    t.add({.name = "min_sharpness", .help = "Accept faces with at least this mean gradient", .min = 0},
          [](C& c) -> double& { return c.thresholds.min_sharpness; });
    t.add({.name = "min_brightness", .help = "Accept faces at least this bright (0-255)", .min = 0, .max = 255},
          [](C& c) -> double& { return c.thresholds.min_brightness; });
    t.add({.name = "max_brightness", .help = "Accept faces at most this bright (0-255)", .min = 0, .max = 255},
          [](C& c) -> double& { return c.thresholds.max_brightness; });
    t.add({.name = "max_pose_angle", .help = "Accept faces turned at most this many degrees (yaw, pitch, roll)",
           .min = 0, .max = 180},
          [](C& c) -> double& { return c.thresholds.max_pose_angle; });
    t.add({.name = "min_overall_quality", .help = "Accept faces with at least this overall quality score (0-1)",
           .min = 0, .max = 1},
          [](C& c) -> double& { return c.thresholds.min_overall_quality; });
    return t;
  }();
  return table;
}

Result<FaceSettings> face_settings_from_json(const std::string& json) {
  FaceSettings settings;
  nlohmann::json values;
  try {
    values = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    return unsupported_format(std::string("face settings: ") + e.what());
  }
  for (const auto& entry : face_params().entries()) {
    const auto it = values.find(entry.spec.name);
    if (it == values.end()) continue;
    ParamValue value;
    if (it->is_boolean()) {
      value = it->get<bool>();
    } else if (it->is_number_integer()) {
      value = it->get<int64_t>();
    } else if (it->is_number()) {
      value = it->get<double>();
    } else if (it->is_string()) {
      value = it->get<std::string>();
    } else {
      return unsupported_format("face settings: " + entry.spec.name + " has an unexpected type");
    }
    KILN_TRY(face_params().set(settings, entry.spec.name, value, "face settings"));
  }
  return settings;
}

}  // namespace kiln
