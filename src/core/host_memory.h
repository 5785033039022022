// How much memory this process may use: the smaller of the machine's RAM and the address-space and data limits
// (ulimit -v, -d) it runs under. Inputs that declare their size (series shapes, image headers) are checked against
// it before anything is allocated.
#pragma once

#include <cstdint>

namespace kiln {

uint64_t host_memory_limit_bytes();

}  // namespace kiln
