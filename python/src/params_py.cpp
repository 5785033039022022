#include "params_py.h"

#include <pybind11/stl.h>

#include <cmath>
#include <map>

#include "errors.h"
#include "py_jobs.h"

namespace kiln::py {

namespace pyb = pybind11;

namespace {

// A Python value as a ParamValue (the declaration then checks its type); bool before int: True is an int too.
ParamValue value_from(pyb::handle object, const std::string& what) {
  if (pyb::isinstance<pyb::bool_>(object)) return object.cast<bool>();
  if (pyb::isinstance<pyb::int_>(object)) return object.cast<int64_t>();
  if (pyb::isinstance<pyb::float_>(object)) return object.cast<double>();
  if (pyb::isinstance<pyb::str>(object)) return object.cast<std::string>();
  if (PyObject_HasAttrString(object.ptr(), "__fspath__")) return pyb::str(object).cast<std::string>();
  if (pyb::isinstance<pyb::sequence>(object) || pyb::hasattr(object, "__array__")) {
    std::vector<double> values;
    for (pyb::handle item : pyb::iter(object)) {
      if (!pyb::isinstance<pyb::int_>(item) && !pyb::isinstance<pyb::float_>(item) &&
          !pyb::hasattr(item, "__float__")) {
        raise_value_error(what + ": expected numbers");
      }
      values.push_back(item.cast<double>());
    }
    return values;
  }
  if (pyb::hasattr(object, "__float__")) return object.cast<double>();  // numpy scalars
  raise_value_error(what + ": unsupported value of type " + std::string(pyb::str(object.get_type())));
}

pyb::object value_to_python(const ParamValue& value) {
  struct ToPython {
    pyb::object operator()(int64_t v) const { return pyb::int_(v); }
    // Through the shortest text, so a float field's 0.485f is 0.485 in Python, not 0.48500001430511475.
    pyb::object operator()(double v) const { return pyb::float_(std::stod(param_text(ParamValue(v)))); }
    pyb::object operator()(bool v) const { return pyb::bool_(v); }
    pyb::object operator()(const std::string& v) const { return pyb::str(v); }
    pyb::object operator()(const std::vector<double>& v) const {
      pyb::list out;
      for (double x : v) out.append((*this)(x));
      return out;
    }
  };
  return std::visit(ToPython{}, value);
}

}  // namespace

void params_apply_kwargs(const ParamSet& params, void* config, const pyb::kwargs& kwargs, const std::string& function) {
  for (const auto& item : kwargs) {
    const std::string name = item.first.cast<std::string>();
    if (params.find(name) == nullptr) {
      throw pyb::type_error(function + "() got an unexpected keyword argument '" + name + "'");
    }
  }
  // In declaration order, like the command line: a general setting (ink) before a specific one (ink_bullish).
  for (const ParamSet::Entry& entry : params.entries()) {
    const char* name = entry.spec.name.c_str();
    if (!kwargs.contains(name)) continue;
    const pyb::handle value = kwargs[name];
    if (value.is_none()) continue;
    status_check(params.set(config, entry.spec.name, value_from(value, entry.spec.name), entry.spec.name));
  }
}

pyb::list params_describe(const ParamSet& params) {
  pyb::list out;
  for (const ParamSet::Entry& entry : params.entries()) {
    const ParamSpec& s = entry.spec;
    pyb::dict d;
    d["name"] = s.name;
    d["type"] = param_type_name(s.type);
    d["default"] = s.required ? pyb::object(pyb::none()) : value_to_python(params.default_value(entry));
    d["default_text"] = s.default_text;
    d["help"] = s.help;
    d["min"] = std::isfinite(s.min) ? pyb::object(pyb::float_(s.min)) : pyb::object(pyb::none());
    d["max"] = std::isfinite(s.max) ? pyb::object(pyb::float_(s.max)) : pyb::object(pyb::none());
    d["choices"] = s.choices;
    d["count"] = pyb::make_tuple(s.min_count, s.max_count);
    d["env"] = s.env;
    d["required"] = s.required;
    out.append(d);
  }
  return out;
}

void params_bindings_add(pyb::module_& m) {
  m.def(
      "params",
      [](const std::string& function) {
        const ParamSet* params = job_params(function);
        if (params == nullptr) raise_value_error("no declared settings for '" + function + "'");
        return params_describe(*params);
      },
      pyb::arg("function"), "The declared keyword settings of a kiln function (name, type, default, help, ...).");
}

}  // namespace kiln::py
