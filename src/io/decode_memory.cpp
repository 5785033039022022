#include "io/decode_memory.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kiln {

namespace {

template <typename Buffer>
void reserve_with_huge_pages(Buffer& buffer, size_t bytes) {
  buffer.reserve(bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  if (bytes < 4 * kHugePage) return;
  const auto start = reinterpret_cast<uintptr_t>(buffer.data());
  const uintptr_t begin = (start + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (start + buffer.capacity()) & ~(kHugePage - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

}  // namespace

void decode_buffer_reserve(std::vector<uint8_t>& buffer, size_t bytes) { reserve_with_huge_pages(buffer, bytes); }
void decode_buffer_reserve(PixelBytes& buffer, size_t bytes) { reserve_with_huge_pages(buffer, bytes); }

}  // namespace kiln
