// Python keywords made from declared settings (kiln/params.h): kwargs are checked and stored through the
// declarations, and the declarations are exported for kiln/_params.py, which gives each job function a real
// signature and docstring.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "kiln/params.h"

namespace kiln::py {

// Stores every keyword argument but None (None keeps the default) into `config` (the ParamSet's type). An unknown
// keyword raises TypeError like a Python function does; a bad value raises KilnValueError naming the keyword.
void params_apply_kwargs(const ParamSet& params, void* config, const pybind11::kwargs& kwargs,
                         const std::string& function);

// [{"name", "type", "default", "help", "min", "max", "choices", "count", "env", "required"}, ...]
pybind11::list params_describe(const ParamSet& params);

// Registers _kiln.params(function) -> the description of that function's declared keywords.
void params_bindings_add(pybind11::module_& m);

}  // namespace kiln::py
