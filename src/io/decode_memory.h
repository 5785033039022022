// The buffers of a large decode (its pixels, a GIF's indices), reserved with a hint for huge pages: a fresh 36 MB buffer (12 MP RGB) is
// otherwise faulted in 9,000 times, 4 KB at a time, which on a virtual machine costs more than decoding into it
// (BMP at 12 MP: about 150 ms of page faults per image). Linux's transparent huge pages in their usual `madvise`
// mode fault it in 2 MB at a time. A hint only: without it (other systems, THP off) nothing changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

// buffer.reserve(bytes), then MADV_HUGEPAGE on the 2 MB-aligned part of its storage when that is 8 MB or more.
void decode_buffer_reserve(std::vector<uint8_t>& buffer, size_t bytes);

}  // namespace kiln
