#include "errors.h"

namespace kiln::py {

namespace {

struct ErrorClasses {
  PyObject* base = nullptr;
  PyObject* value = nullptr;
  PyObject* io = nullptr;
  PyObject* device = nullptr;
  PyObject* memory = nullptr;
  PyObject* not_implemented = nullptr;
};

ErrorClasses g_classes;  // set once at import; the classes live as long as the module

PyObject* make_class(pybind11::module_& m, const char* name, PyObject* base, PyObject* builtin, const char* doc) {
  const std::string qualified = std::string("kiln.") + name;
  PyObject* bases = builtin ? PyTuple_Pack(2, base, builtin) : nullptr;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases ? bases : base, nullptr);
  Py_XDECREF(bases);
  if (!cls) throw pybind11::error_already_set();
  m.add_object(name, pybind11::handle(cls));
  return cls;
}

PyObject* class_for(Errc code) {
  switch (code) {
    case Errc::kInvalidArgument:
    case Errc::kUnsupportedFormat:
      return g_classes.value;
    case Errc::kIoError:
      return g_classes.io;
    case Errc::kDeviceError:
      return g_classes.device;
    case Errc::kOutOfMemory:
      return g_classes.memory;
    case Errc::kNotImplemented:
      return g_classes.not_implemented;
    default:
      return g_classes.base;
  }
}

// An instance with one argument (the message) and a `code` attribute ("InvalidArgument", ...); nullptr with the
// Python error set when that fails.
PyObject* exception_new(PyObject* cls, Errc code, const std::string& message) {
  PyObject* exc = PyObject_CallFunction(cls, "s", message.c_str());
  if (exc) {
    PyObject* name = PyUnicode_FromString(errc_name(code));
    if (name) {
      PyObject_SetAttrString(exc, "code", name);
      Py_DECREF(name);
    }
  }
  return exc;
}

[[noreturn]] void raise(PyObject* cls, Errc code, const std::string& message) {
  if (PyObject* exc = exception_new(cls, code, message)) {
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
  }
  throw pybind11::error_already_set();
}

}  // namespace

void errors_register(pybind11::module_& m) {
  g_classes.base = make_class(m, "KilnError", PyExc_Exception, nullptr, "Base class of every error kiln raises.");
  g_classes.value = make_class(m, "KilnValueError", g_classes.base, PyExc_ValueError,
                               "Invalid argument or unsupported format.");
  g_classes.io = make_class(m, "KilnIOError", g_classes.base, PyExc_OSError, "Reading or writing a file failed.");
  g_classes.device = make_class(m, "KilnDeviceError", g_classes.base, PyExc_RuntimeError,
                                "A GPU backend failed (driver, kernel or device).");
  g_classes.memory = make_class(m, "KilnMemoryError", g_classes.base, PyExc_MemoryError,
                                "Host or device memory could not be allocated.");
  g_classes.not_implemented = make_class(m, "KilnNotImplementedError", g_classes.base, PyExc_NotImplementedError,
                                         "The operation is not implemented for these arguments.");
}

void status_check(const Status& status) {
  if (status.is_ok()) return;
  raise(class_for(status.code()), status.code(), status.message());
}

pybind11::object status_exception(const Status& status) {
  PyObject* exc = exception_new(class_for(status.code()), status.code(), status.message());
  if (!exc) throw pybind11::error_already_set();
  return pybind11::reinterpret_steal<pybind11::object>(exc);
}

void raise_value_error(const std::string& message) { raise(g_classes.value, Errc::kInvalidArgument, message); }

}  // namespace kiln::py
