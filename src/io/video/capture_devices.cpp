#include "io/video/capture_devices.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

extern "C" {
#include <libavdevice/version.h>
#include <libavutil/macros.h>
}

namespace kiln {

Status capture_devices_register() {
  static const Status registered = [] {
    const std::string library = "libavdevice.so." AV_STRINGIFY(LIBAVDEVICE_VERSION_MAJOR);
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL);  // kept for the process: devices stay registered
    if (handle == nullptr) {
      const char* why = dlerror();
      return io_error("capture devices need " + library + " (Debian: libavdevice" +
                      AV_STRINGIFY(LIBAVDEVICE_VERSION_MAJOR) + "): " + (why != nullptr ? why : "not found"));
    }
    using RegisterAll = void (*)();
    auto* register_all = reinterpret_cast<RegisterAll>(dlsym(handle, "avdevice_register_all"));
    if (register_all == nullptr) return io_error(library + " has no avdevice_register_all");
    register_all();
    return Status::ok();
  }();
  return registered;
}

}  // namespace kiln
