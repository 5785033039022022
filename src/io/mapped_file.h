// Read-only memory mapping of a whole file (input readers parse straight from it, no copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile() { reset(); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // IoError naming the path when it is missing, not a regular file, or cannot be mapped. Empty files map to
  // {nullptr, 0}.
  Status open(const std::string& path);
  void reset();

  const char* chars() const { return static_cast<const char*>(m_data); }
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(m_data); }
  size_t size() const { return m_size; }

 private:
  const void* m_data = nullptr;
  size_t m_size = 0;
};

}  // namespace kiln
