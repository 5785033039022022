#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "exec/devices_report.h"
#if KILN_HAS_ORT
#include "kiln/infer.h"
#endif

namespace kiln::cli {

namespace {

// ONNX Runtime's version and which execution providers can run here, and why not.
nlohmann::json onnxruntime_json() {
#if KILN_HAS_ORT
  nlohmann::json providers = nlohmann::json::array();
  for (const auto& s : infer_provider_statuses()) {
    providers.push_back({{"name", infer_provider_name(s.provider)}, {"available", s.available}, {"reason", s.reason}});
  }
  return {{"version", onnxruntime_info().version}, {"providers", providers}};
#else
  return {{"version", nullptr}, {"providers", nlohmann::json::array()}, {"reason", "built without ONNX Runtime"}};
#endif
}

}  // namespace

Runner devices_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List backends, devices and memory");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  return [json] {
    nlohmann::json out = nlohmann::json::parse(devices_report_json());
    out["onnxruntime"] = onnxruntime_json();
    if (*json) {
      std::printf("%s\n", out.dump(2).c_str());
      return 0;
    }
    for (const auto& b : out["backends"]) {
      std::printf("%-7s %s\n", b["name"].get<std::string>().c_str(),
                  b["available"].get<bool>() ? "available" : ("unavailable: " + b["reason"].get<std::string>()).c_str());
      for (const auto& d : b["devices"]) {
        std::printf("        %s [%s], %d units, %.1f GiB total, %.1f GiB free\n", d["name"].get<std::string>().c_str(),
                    d["version"].get<std::string>().c_str(), d["compute_units"].get<int>(),
                    d["total_memory"].get<double>() / (1 << 30), d["free_memory"].get<double>() / (1 << 30));
      }
    }
    const auto& ort = out["onnxruntime"];
    if (ort["version"].is_null()) {
      std::printf("onnxruntime: %s\n", ort["reason"].get<std::string>().c_str());
      return 0;
    }
    std::printf("onnxruntime %s, execution providers:\n", ort["version"].get<std::string>().c_str());
    for (const auto& p : ort["providers"]) {
      std::printf("        %-9s %s\n", p["name"].get<std::string>().c_str(),
                  p["available"].get<bool>() ? "available" : ("unavailable: " + p["reason"].get<std::string>()).c_str());
    }
    return 0;
  };
}

}  // namespace kiln::cli
