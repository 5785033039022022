#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "exec/devices_report.h"

namespace kiln::cli {

Runner devices_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List backends, devices and memory");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  return [json] {
    const nlohmann::json out = nlohmann::json::parse(devices_report_json());
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
    return 0;
  };
}

}  // namespace kiln::cli
