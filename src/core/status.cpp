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

std::string Status::message_line() const { return text_one_line(m_message); }

std::string text_one_line(const std::string& text) {
  std::string line;
  line.reserve(text.size());
  bool after_break = false;  // a break and the indentation after it become one space
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '\n' || byte == '\r' || ((byte == ' ' || byte == '\t') && after_break)) {
      after_break = true;
      continue;
    }
    if (after_break && !line.empty()) line += ' ';
    after_break = false;
    if (byte < 0x20 || byte == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      line += "\\x";
      line += kHex[byte >> 4];
      line += kHex[byte & 15];
    } else {
      line += c;
    }
  }
  return line;
}

std::string Status::to_string() const {
  if (is_ok()) return "Ok";
  return std::string(errc_name(m_code)) + ": " + m_message;
}

}  // namespace kiln
