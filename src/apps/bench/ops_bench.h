// `kiln bench ops`: every image op timed per image size, backend and batch size on seeded batches (ops_workload.h),
// held where --resident says (ops_resident.h), as JSON and, line by line as they are measured, a table.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/status.h"

namespace kiln::bench {

struct OpsBenchSettings {
  std::vector<std::string> ops;  // empty: all of workload_op_names()
  std::vector<std::string> sizes{"small", "medium", "large"};
  std::vector<int64_t> batch_sizes{1, 8, 32};
  int32_t iterations = 10;
  std::string mode = "auto";      // auto: every available backend | gpu | cpu
  std::string resident = "host";  // host | pinned | device: where GPU backends' batches are before a call
  int32_t threads = 0;            // the CPU backend's (0: all cores)
};

// One line of the table, newline included: its header first, then each result's row as soon as it is measured.
using TableLine = std::function<void(const std::string& line)>;

// The results ({"results": [...], "analysis": {"performance_gains": [...]}, and the run's settings}); `table`, when
// given, receives the table. InvalidArgument for bad settings, DeviceError for mode gpu without a GPU backend.
Result<nlohmann::json> ops_bench_run(const OpsBenchSettings& settings, const TableLine& table);

}  // namespace kiln::bench
