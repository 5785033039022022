#include "kiln/status.h"

namespace kiln {

const char* errc_name(Errc code) {
  switch (code) {
    case Errc::kOk: return "Ok";
    case Errc::kInvalidArgument: return "InvalidArgument";
    case Errc::kUnsupportedFormat: return "UnsupportedFormat";
    case Errc::kOutOfMemory: return "OutOfMemory";
    case Errc::kDeviceError: return "DeviceError";
    case Errc::kNotImplemented: return "NotImplemented";
    case Errc::kIoError: return "IoError";
    case Errc::kCancelled: return "Cancelled";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "Ok";
  return std::string(errc_name(m_code)) + ": " + m_message;
}

}  // namespace kiln
