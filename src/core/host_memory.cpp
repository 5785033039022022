#include "core/host_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace kiln {

uint64_t host_memory_limit_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  uint64_t limit = pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                                              : UINT64_MAX;
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit rl{};
    if (::getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
      limit = std::min<uint64_t>(limit, rl.rlim_cur);
    }
  }
  return limit;
}

}  // namespace kiln
