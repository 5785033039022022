#include "io/fletcher32.h"

namespace kiln {

uint32_t hdf5_fletcher32(const uint8_t* data, size_t size) {
  uint32_t sum1 = 0;
  uint32_t sum2 = 0;
  size_t words = size / 2;
  while (words > 0) {
    const size_t block = words < 360 ? words : 360;  // 360 words cannot overflow the 32-bit sums
    words -= block;
    for (size_t i = 0; i < block; ++i) {
      sum1 += (static_cast<uint32_t>(data[0]) << 8) | data[1];
      sum2 += sum1;
      data += 2;
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (size % 2 != 0) {
    sum1 += static_cast<uint32_t>(data[0]) << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}

void hdf5_fletcher32_append(std::vector<uint8_t>& out, size_t start) {
  const uint32_t sum = hdf5_fletcher32(out.data() + start, out.size() - start);
  for (int32_t shift = 0; shift < 32; shift += 8) out.push_back(static_cast<uint8_t>(sum >> shift));
}

}  // namespace kiln
