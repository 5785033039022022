#include "kiln/status.h"

#include <cerrno>
#include <cstring>

#include "kiln/enum_names.h"

namespace kiln {

namespace {
constexpr EnumName<Errc> kErrcNames[] = {
    {Errc::kOk, "Ok"},           {Errc::kInvalidArgument, "InvalidArgument"}, {Errc::kUnsupportedFormat, "UnsupportedFormat"},
    {Errc::kOutOfMemory, "OutOfMemory"}, {Errc::kDeviceError, "DeviceError"}, {Errc::kNotImplemented, "NotImplemented"},
    {Errc::kIoError, "IoError"}, {Errc::kCancelled, "Cancelled"}};
}  // namespace

Status errno_status(const std::string& what) { return io_error(what + ": " + std::strerror(errno)); }

const char* errc_name(Errc code) { return enum_name(kErrcNames, code); }

std::string Status::to_string() const {
  if (is_ok()) return "Ok";
  return std::string(errc_name(m_code)) + ": " + m_message;
}

}  // namespace kiln
