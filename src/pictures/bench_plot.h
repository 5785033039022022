// `--plot out.png` of every benchmark: its JSON results drawn by kiln/bench_plot.py (the Python package's plotter,
// embedded in the program) with matplotlib, in the interpreter KILN_PYTHON names (default: python3 on PATH, then
// Debian's /usr/bin/python3).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kiln/status.h"

namespace kiln {

// Writes `png` (crash-safely: a temporary file renamed). NotImplemented naming the fix when Python 3 or matplotlib
// is missing; InvalidArgument with Python's last error line when the plotter fails (results without a throughput).
Status bench_plot_write(const nlohmann::json& results, const std::string& png, const std::string& title);

}  // namespace kiln
