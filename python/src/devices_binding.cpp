// _kiln.devices(): the backend registry as data, like `kiln devices --json`.
#include <pybind11/stl.h>

#include "bindings.h"
#include "kiln/device.h"

namespace kiln::py {

namespace {

namespace pyb = pybind11;

pyb::list devices_py() {
  const BackendRegistry& registry = BackendRegistry::instance();
  pyb::list out;
  int64_t priority = 0;
  for (const auto& status : registry.statuses()) {
    pyb::dict b;
    b["name"] = backend_kind_name(status.kind);
    b["available"] = status.available;
    b["reason"] = status.reason;
    b["priority"] = priority++;
    pyb::list devices;
    for (const auto& backend : registry.backends()) {
      if (backend->kind() != status.kind) continue;
      for (const auto& d : backend->devices()) {
        pyb::dict dev;
        dev["name"] = d.name;
        dev["vendor"] = d.vendor;
        dev["version"] = d.version;
        dev["total_memory"] = d.total_memory;
        dev["free_memory"] = d.free_memory;
        dev["compute_units"] = d.compute_units;
        dev["pool_bytes"] = d.pool_bytes;
        devices.append(dev);
      }
    }
    b["devices"] = devices;
    out.append(b);
  }
  return out;
}

}  // namespace

void devices_bindings_add(pyb::module_& m) {
  m.def("devices", &devices_py,
        "Backends in priority order (CPU last): dicts with name, available, reason, priority and devices "
        "(name, vendor, version, total_memory, free_memory, compute_units, pool_bytes).");
}

}  // namespace kiln::py
