// The backend registry as data: what `kiln devices --json` prints and `kiln.devices()` returns.
#pragma once

#include <string>

namespace kiln {

// {"backends": [{"name", "available", "reason", "priority", "devices": [{"name", "vendor", "version",
// "total_memory", "free_memory", "compute_units", "pool_bytes"}]}]}, CPU last.
std::string devices_report_json();

}  // namespace kiln
