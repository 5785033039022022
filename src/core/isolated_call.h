// Running a parser of untrusted files in a forked child, for libraries that can crash on malformed input (HDF5 1.10
// does, on fuzzed files): the child's result comes back through a pipe, and a child killed by a signal is an error
// naming the file rather than the end of the caller's process.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// Runs fn in a child process and returns its bytes or its error. UnsupportedFormat "<what>: ... crashed (signal N)"
// when the child dies.
Result<std::vector<uint8_t>> isolated_call(const std::function<Result<std::vector<uint8_t>>()>& fn,
                                           const std::string& what);

}  // namespace kiln
