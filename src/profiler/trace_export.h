// Chrome trace event JSON export of the profiler's events; the file opens in Perfetto (ui.perfetto.dev)
// and chrome://tracing.
//
// Layout: {"traceEvents":[...],"displayTimeUnit":"ms"} with pid 1, tid = the profiler's small thread ids,
// ts/dur in microseconds since the profiler's epoch. Ranges are complete events ("ph":"X"), threads are
// named by metadata events ("ph":"M", "thread_name"), counters are "ph":"C" with args {"value": v}, and
// flows are "ph":"s" / "ph":"f" (with "bp":"e") pairs sharing name, cat ("flow") and id.
#pragma once

#include <string>

#include "kiln/status.h"

namespace kiln {

// The whole trace as one JSON string (tests, small traces).
std::string trace_to_json();

// Writes the trace to path.tmp, then renames it to path, so readers never see a partial file.
Status trace_write_chrome(const std::string& path);

}  // namespace kiln
