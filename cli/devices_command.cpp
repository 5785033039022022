#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "kiln/device.h"

namespace kiln::cli {

Runner devices_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List backends, devices and memory");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  return [json] {
    const auto& registry = BackendRegistry::instance();
    nlohmann::json out;
    out["backends"] = nlohmann::json::array();
    for (const auto& status : registry.statuses()) {
      nlohmann::json b;
      b["name"] = backend_kind_name(status.kind);
      b["available"] = status.available;
      b["reason"] = status.reason;
      b["priority"] = out["backends"].size();
      b["devices"] = nlohmann::json::array();
      for (const auto& backend : registry.backends()) {
        if (backend->kind() != status.kind) continue;
        for (const auto& d : backend->devices()) {
          b["devices"].push_back({{"name", d.name}, {"vendor", d.vendor}, {"version", d.version},
                                  {"total_memory", d.total_memory}, {"free_memory", d.free_memory},
                                  {"compute_units", d.compute_units}, {"pool_bytes", d.pool_bytes}});
        }
      }
      out["backends"].push_back(b);
    }
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
