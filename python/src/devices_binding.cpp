// _kiln.devices_json(): the backend registry as JSON text, exactly what `kiln devices --json` prints
// (kiln.devices() parses it).
#include "bindings.h"
#include "exec/devices_report.h"

namespace kiln::py {

void devices_bindings_add(pybind11::module_& m) {
  m.def("devices_json", &devices_report_json, "Backends, devices and memory as JSON text (CPU last).");
}

}  // namespace kiln::py
