// Owning HDF5 handles and HDF5 errors as kiln Status (the HDF5 stack's messages, automatic printing silenced).
#pragma once

#include <hdf5.h>

#include <string>

#include "kiln/status.h"

namespace kiln::hdf5 {

class Handle {
 public:
  using CloseFn = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, CloseFn close) : m_id(id), m_close(close) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : m_id(other.m_id), m_close(other.m_close) { other.m_id = H5I_INVALID_HID; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return m_id; }
  bool valid() const { return m_id >= 0; }
  void reset();    // closes, ignoring errors
  Status close();  // closes, reporting errors

 private:
  hid_t m_id = H5I_INVALID_HID;
  CloseFn m_close = nullptr;
};

inline Handle file_handle(hid_t id) { return {id, H5Fclose}; }
inline Handle dataset_handle(hid_t id) { return {id, H5Dclose}; }
inline Handle group_handle(hid_t id) { return {id, H5Gclose}; }
inline Handle space_handle(hid_t id) { return {id, H5Sclose}; }
inline Handle plist_handle(hid_t id) { return {id, H5Pclose}; }
inline Handle type_handle(hid_t id) { return {id, H5Tclose}; }
inline Handle attribute_handle(hid_t id) { return {id, H5Aclose}; }

// Silences HDF5's automatic error printing on this thread for the scope's lifetime (errors come back as Status).
class ErrorScope {
 public:
  ErrorScope();
  ~ErrorScope();
  ErrorScope(const ErrorScope&) = delete;
  ErrorScope& operator=(const ErrorScope&) = delete;

 private:
  H5E_auto2_t m_func = nullptr;
  void* m_data = nullptr;
};

// IoError "<what>: <innermost HDF5 error descriptions>", clearing the HDF5 error stack. A failed system call is named
// by its strerror ("No space left on device") rather than HDF5's multi-field dump.
Status error(const std::string& what);

// The UTF-8 variable-length string type kiln writes strings with.
Result<Handle> string_type();
// A string attribute, variable- or fixed-length; `name` names it in errors.
Result<std::string> attribute_read_string(hid_t attr, const char* name);

}  // namespace kiln::hdf5
