#include "io/npy_format.h"

#include <bit>

namespace kiln {

namespace {
constexpr size_t kPreamble = 10;  // magic (6), version (2), header length (2)
constexpr bool kLittle = std::endian::native == std::endian::little;
}  // namespace

const char* npy_descr(PixelType type) {
  switch (type) {
    case PixelType::kU8: return "|u1";
    case PixelType::kF16: return kLittle ? "<f2" : ">f2";
    case PixelType::kF32: break;
  }
  return kLittle ? "<f4" : ">f4";
}

std::string npy_header(PixelType type, const std::vector<int64_t>& shape, size_t total_bytes) {
  return npy_header(std::string(npy_descr(type)), shape, total_bytes);
}

std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape, size_t total_bytes) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  const size_t unpadded = kPreamble + dict.size() + 1;
  if (total_bytes == 0) total_bytes = unpadded + (64 - unpadded % 64) % 64;
  if (unpadded > total_bytes || total_bytes - kPreamble > 65535) return {};
  dict.append(total_bytes - unpadded, ' ');
  dict += '\n';
  std::string header = "\x93NUMPY";
  header += static_cast<char>(1);
  header += static_cast<char>(0);
  header += static_cast<char>(dict.size() & 0xFF);
  header += static_cast<char>((dict.size() >> 8) & 0xFF);
  return header + dict;
}

}  // namespace kiln
