#include "exec/devices_report.h"

#include <nlohmann/json.hpp>

#include "kiln/device.h"

namespace kiln {

std::string devices_report_json() {
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
  return out.dump();
}

}  // namespace kiln
