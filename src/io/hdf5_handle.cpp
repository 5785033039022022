#include "io/hdf5_handle.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln::hdf5 {

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    m_id = other.m_id;
    m_close = other.m_close;
    other.m_id = H5I_INVALID_HID;
  }
  return *this;
}

void Handle::reset() {
  if (m_id >= 0 && m_close != nullptr) {
    ErrorScope quiet;
    if (m_close(m_id) < 0) H5Eclear2(H5E_DEFAULT);
  }
  m_id = H5I_INVALID_HID;
}

Status Handle::close() {
  if (m_id < 0) return Status::ok();
  const hid_t id = m_id;
  m_id = H5I_INVALID_HID;
  if (m_close != nullptr && m_close(id) < 0) return error("cannot close HDF5 object");
  return Status::ok();
}

ErrorScope::ErrorScope() {
  H5Eget_auto2(H5E_DEFAULT, &m_func, &m_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

ErrorScope::~ErrorScope() { H5Eset_auto2(H5E_DEFAULT, m_func, m_data); }

namespace {

struct ErrorWalk {
  std::vector<std::string> lines;
};

herr_t error_walk_cb(unsigned /*n*/, const H5E_error2_t* err, void* data) {
  auto* walk = static_cast<ErrorWalk*>(data);
  std::string line;
  // The sec2 driver's "file write failed: time = ..., errno = 28, error message = '...', buf = ..." on one record.
  if (err->desc != nullptr) {
    if (const char* at = std::strstr(err->desc, "errno = ")) {
      const int code = std::atoi(at + 8);
      if (code > 0) {
        walk->lines.emplace_back(std::strerror(code));
        return 0;
      }
    }
  }
  char minor[256] = {0};
  if (H5Eget_msg(err->min_num, nullptr, minor, sizeof(minor)) < 0) minor[0] = '\0';
  if (err->desc != nullptr && err->desc[0] != '\0') line = err->desc;
  if (minor[0] != '\0') line += std::string(line.empty() ? "" : " (") + minor + (line.empty() ? "" : ")");
  if (!line.empty()) walk->lines.push_back(std::move(line));
  return 0;
}

}  // namespace

Status error(const std::string& what) {
  ErrorWalk walk;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, error_walk_cb, &walk);
  H5Eclear2(H5E_DEFAULT);
  std::string message = what;
  if (!walk.lines.empty()) {
    // Outermost (API level) and innermost (the actual cause) are the informative ends of the stack.
    message += ": " + walk.lines.front();
    if (walk.lines.size() > 1) message += ": " + walk.lines.back();
  }
  return io_error(message);
}

Result<Handle> string_type() {
  Handle type = type_handle(H5Tcopy(H5T_C_S1));
  if (!type.valid() || H5Tset_size(type.get(), H5T_VARIABLE) < 0 ||
      H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0) {
    return error("cannot create string type");
  }
  return type;
}

Result<std::string> attribute_read_string(hid_t attr, const char* name) {
  Handle type = type_handle(H5Aget_type(attr));
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) {
    return io_error(std::string("attribute ") + name + " is not a string");
  }
  const htri_t is_var = H5Tis_variable_str(type.get());
  if (is_var < 0) return error(std::string("cannot inspect attribute ") + name);
  if (is_var > 0) {
    KILN_TRY_ASSIGN(Handle mem, string_type());
    char* ptr = nullptr;
    if (H5Aread(attr, mem.get(), &ptr) < 0) return error(std::string("cannot read attribute ") + name);
    std::string value = ptr != nullptr ? std::string(ptr) : std::string();
    H5free_memory(ptr);
    return value;
  }
  const size_t size = H5Tget_size(type.get());
  std::string value(size, '\0');
  Handle mem = type_handle(H5Tcopy(H5T_C_S1));
  if (!mem.valid() || H5Tset_size(mem.get(), size) < 0 || H5Aread(attr, mem.get(), value.data()) < 0) {
    return error(std::string("cannot read attribute ") + name);
  }
  const size_t end = value.find('\0');
  if (end != std::string::npos) value.resize(end);
  return value;
}

}  // namespace kiln::hdf5
