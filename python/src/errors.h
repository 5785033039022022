// kiln Status -> Python exceptions. KilnError is the base; each Errc also derives from the matching builtin
// (ValueError, OSError, RuntimeError, MemoryError, NotImplementedError) so callers can catch either.
#pragma once

#include <pybind11/pybind11.h>

#include "kiln/status.h"

namespace kiln::py {

// Creates the exception classes and adds them to `m` (KilnError, KilnValueError, ...).
void errors_register(pybind11::module_& m);

// Raises the Python exception for a failed status (the GIL must be held); does nothing for ok.
void status_check(const Status& status);

// The exception instance for a failed status, not raised (the GIL must be held).
pybind11::object status_exception(const Status& status);

// Raises KilnValueError with `message`.
[[noreturn]] void raise_value_error(const std::string& message);

}  // namespace kiln::py
