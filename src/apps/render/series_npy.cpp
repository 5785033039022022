// NPY input for series_load_npy(): versions 1-3, little-endian float32/float64/int32/int64, C or Fortran
// order, shapes (N,), (N,1) and (N,4).

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "io/mapped_file.h"
#include "kiln/apps/render.h"

namespace kiln {

namespace {


enum class NpyType { kF4, kF8, kI4, kI8 };

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

size_t type_size(NpyType t) { return (t == NpyType::kF4 || t == NpyType::kI4) ? 4 : 8; }

const char* type_name(NpyType t) {
  switch (t) {
    case NpyType::kF4: return "float32";
    case NpyType::kF8: return "float64";
    case NpyType::kI4: return "int32";
    case NpyType::kI8: return "int64";
  }
  return "?";
}

bool parse_type(const std::string& descr, NpyType& type) {
  if (descr.size() != 3) return false;
  const char order = descr[0];
  if (order != '<' && order != '=') return false;  // kiln only runs on little-endian hosts
  const std::string_view code(descr.data() + 1, 2);
  if (code == "f4") type = NpyType::kF4;
  else if (code == "f8") type = NpyType::kF8;
  else if (code == "i4") type = NpyType::kI4;
  else if (code == "i8") type = NpyType::kI8;
  else return false;
  return true;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

void skip_spaces(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
}

// Finds `'key':` (or "key":) and returns the index just after the colon, or npos.
size_t find_value(std::string_view dict, std::string_view key) {
  for (const char q : {'\'', '"'}) {
    const std::string quoted = std::string(1, q) + std::string(key) + std::string(1, q);
    size_t at = dict.find(quoted);
    if (at == std::string_view::npos) continue;
    at += quoted.size();
    skip_spaces(dict, at);
    if (at < dict.size() && dict[at] == ':') return at + 1;
  }
  return std::string_view::npos;
}

// Parses the Python dict literal numpy writes: {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
bool parse_header(std::string_view dict, NpyHeader& header) {
  size_t i = find_value(dict, "descr");
  if (i == std::string_view::npos) return false;
  skip_spaces(dict, i);
  if (i >= dict.size() || (dict[i] != '\'' && dict[i] != '"')) return false;
  const char quote = dict[i++];
  const size_t close = dict.find(quote, i);
  if (close == std::string_view::npos) return false;
  header.descr = std::string(dict.substr(i, close - i));

  i = find_value(dict, "fortran_order");
  if (i == std::string_view::npos) return false;
  skip_spaces(dict, i);
  if (dict.substr(i, 4) == "True") header.fortran_order = true;
  else if (dict.substr(i, 5) == "False") header.fortran_order = false;
  else return false;

  i = find_value(dict, "shape");
  if (i == std::string_view::npos) return false;
  skip_spaces(dict, i);
  if (i >= dict.size() || dict[i] != '(') return false;
  ++i;
  header.shape.clear();
  for (;;) {
    skip_spaces(dict, i);
    if (i >= dict.size()) return false;
    if (dict[i] == ')') break;
    if (dict[i] < '0' || dict[i] > '9') return false;
    int64_t v = 0;
    while (i < dict.size() && dict[i] >= '0' && dict[i] <= '9') {
      if (v > (INT64_MAX - 9) / 10) return false;
      v = v * 10 + (dict[i] - '0');
      ++i;
    }
    while (i < dict.size() && dict[i] == 'L') ++i;  // Python 2 longs
    header.shape.push_back(v);
    skip_spaces(dict, i);
    if (i < dict.size() && dict[i] == ',') ++i;
  }
  return true;
}

template <typename T>
float load_as_float(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<float>(v);
}

float element(NpyType type, const unsigned char* p) {
  switch (type) {
    case NpyType::kF4: return load_as_float<float>(p);
    case NpyType::kF8: return load_as_float<double>(p);
    case NpyType::kI4: return load_as_float<int32_t>(p);
    case NpyType::kI8: return load_as_float<int64_t>(p);
  }
  return 0.0f;
}

template <typename T>
void convert(const unsigned char* src, size_t count, float* dst) {
  for (size_t i = 0; i < count; ++i) dst[i] = load_as_float<T>(src + i * sizeof(T));
}

}  // namespace

Result<Series> series_load_npy(const std::string& path, bool ohlc, bool volume) {
  MappedFile file;
  KILN_TRY(file.open(path));
  const unsigned char* data = file.bytes();
  const size_t size = file.size();

  constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10) {
    if (size >= 6 && std::memcmp(data, kMagic, 6) != 0) return unsupported_format(path + ": not an NPY file");
    return io_error(path + ": truncated NPY header (" + std::to_string(size) + " bytes)");
  }
  if (std::memcmp(data, kMagic, 6) != 0) return unsupported_format(path + ": not an NPY file");
  const int major = data[6];
  size_t header_len = 0;
  size_t offset = 0;
  if (major == 1) {
    header_len = static_cast<size_t>(data[8]) | (static_cast<size_t>(data[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return io_error(path + ": truncated NPY header (" + std::to_string(size) + " bytes)");
    header_len = static_cast<size_t>(data[8]) | (static_cast<size_t>(data[9]) << 8) |
                 (static_cast<size_t>(data[10]) << 16) | (static_cast<size_t>(data[11]) << 24);
    offset = 12;
  } else {
    return unsupported_format(path + ": unsupported NPY version " + std::to_string(major));
  }
  if (size < offset + header_len) {
    return io_error(path + ": truncated NPY header (needs " + std::to_string(offset + header_len) +
                    " bytes, file has " + std::to_string(size) + ")");
  }
  NpyHeader header;
  const std::string_view dict(reinterpret_cast<const char*>(data + offset), header_len);
  if (!parse_header(dict, header)) return unsupported_format(path + ": cannot parse the NPY header");
  const size_t data_offset = offset + header_len;

  NpyType type = NpyType::kF4;
  if (!parse_type(header.descr, type)) {
    return unsupported_format(path + ": unsupported dtype '" + header.descr +
                              "' (expected little-endian <f4, <f8, <i4 or <i8)");
  }
  const std::vector<int64_t>& shape = header.shape;
  const int64_t extra = volume ? 1 : 0;
  const bool is_ohlc_shape = shape.size() == 2 && shape[1] == 4 + extra;
  if (ohlc && !is_ohlc_shape) {
    return invalid_argument(path + ": OHLC input needs shape (N, " + std::to_string(4 + extra) +
                            ") (Open, High, Low, Close" + (volume ? ", Volume" : "") + "), got " +
                            shape_string(shape));
  }
  int32_t channels = 0;
  if (shape.size() == 1 && !volume) channels = 1;
  else if (shape.size() == 2 && (shape[1] == 1 + extra || shape[1] == 4 + extra)) channels = static_cast<int32_t>(shape[1]);
  if (channels == 0) {
    return unsupported_format(path + ": unsupported shape " + shape_string(shape) +
                              (volume ? " (expected (N, 2) or (N, 5): the prices, then the volume)"
                                      : " (expected (N,), (N, 1) or (N, 4))"));
  }
  const int64_t rows = shape[0];
  if (rows == 0) return io_error(path + ": empty array, no data rows");

  if (static_cast<uint64_t>(rows) > SIZE_MAX / 8 / 4) {
    return io_error(path + ": truncated: shape " + shape_string(shape) + " is larger than the file");
  }
  const size_t count = static_cast<size_t>(rows) * static_cast<size_t>(channels);
  const size_t item = type_size(type);
  const size_t need = count * item;
  if (size - data_offset < need) {
    return io_error(path + ": truncated: shape " + shape_string(shape) + " " + type_name(type) + " needs " +
                    std::to_string(need) + " data bytes, file has " + std::to_string(size - data_offset));
  }

  Series series;
  series.rows = rows;
  series.channels = channels;
  series.layers = volume ? 1 : 0;
  series.source = path;
  series.column = channels - extra == 4 ? std::string("Open,High,Low,Close") : std::filesystem::path(path).stem().string();
  series.values.resize(count);
  const unsigned char* src = data + data_offset;
  float* dst = series.values.data();
  if (!header.fortran_order || channels == 1) {
    switch (type) {
      case NpyType::kF4: std::memcpy(dst, src, need); break;
      case NpyType::kF8: convert<double>(src, count, dst); break;
      case NpyType::kI4: convert<int32_t>(src, count, dst); break;
      case NpyType::kI8: convert<int64_t>(src, count, dst); break;
    }
  } else {
    // Fortran order: element (i, c) is at c * rows + i.
    for (int32_t c = 0; c < channels; ++c) {
      const unsigned char* column = src + static_cast<size_t>(c) * static_cast<size_t>(rows) * item;
      for (int64_t i = 0; i < rows; ++i) {
        dst[static_cast<size_t>(i) * static_cast<size_t>(channels) + static_cast<size_t>(c)] =
            element(type, column + static_cast<size_t>(i) * item);
      }
    }
  }
  return series;
}

}  // namespace kiln
