// Status and Result<T>: the only error channel of the library (no exceptions in core and ops).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace kiln {

enum class Errc : uint8_t {
  kOk = 0,
  kInvalidArgument,
  kUnsupportedFormat,
  kOutOfMemory,
  kDeviceError,
  kNotImplemented,
  kIoError,
  kCancelled,
};

const char* errc_name(Errc code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Errc code, std::string message) : m_code(code), m_message(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return m_code == Errc::kOk; }
  Errc code() const { return m_code; }
  const std::string& message() const { return m_message; }
  // The message as one terminal line (text_one_line).
  std::string message_line() const;
  // "IoError: prices.csv: cannot open" style, for logs and the CLI.
  std::string to_string() const;
  void reset() {
    m_code = Errc::kOk;
    m_message.clear();
  }

 private:
  Errc m_code = Errc::kOk;
  std::string m_message;
};

// `text` as one terminal line: line breaks (and the indentation after them) become one space, other control bytes
// \xNN (messages quote bytes from the user's files).
std::string text_one_line(const std::string& text);

inline Status invalid_argument(std::string message) { return {Errc::kInvalidArgument, std::move(message)}; }
inline Status io_error(std::string message) { return {Errc::kIoError, std::move(message)}; }
// IoError "<what>: <strerror(errno)>", for a system call that just failed.
Status errno_status(const std::string& what);
inline Status unsupported_format(std::string message) { return {Errc::kUnsupportedFormat, std::move(message)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_state(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : m_state(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool is_ok() const { return std::holds_alternative<T>(m_state); }
  const Status& status() const {
    static const Status kOkStatus;
    return is_ok() ? kOkStatus : std::get<Status>(m_state);
  }
  T& value() & { return std::get<T>(m_state); }
  const T& value() const& { return std::get<T>(m_state); }
  T&& value() && { return std::get<T>(std::move(m_state)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> m_state;
};

namespace detail {
inline Status to_status(Status s) { return s; }
template <typename T>
Status to_status(const Result<T>& r) { return r.status(); }
}  // namespace detail

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

// Early-return on failure: KILN_TRY(write_header(f));
#define KILN_TRY(expr)                                                   \
  do {                                                                   \
    ::kiln::Status kiln_try_status_ = ::kiln::detail::to_status((expr)); \
    if (!kiln_try_status_.is_ok()) return kiln_try_status_;              \
  } while (0)

// Unwrap a Result into a new variable or return its error: KILN_TRY_ASSIGN(auto series, series_load(src));
#define KILN_TRY_ASSIGN(decl, expr) KILN_TRY_ASSIGN_IMPL(KILN_CONCAT(kiln_result_, __LINE__), decl, expr)
#define KILN_TRY_ASSIGN_IMPL(tmp, decl, expr)   \
  auto tmp = (expr);                            \
  if (!tmp.is_ok()) return tmp.status();        \
  decl = std::move(tmp).value()

#ifndef NDEBUG
#include <cstdio>
#include <cstdlib>
#define KILN_ASSERT(cond)                                                          \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                \
    }                                                                              \
  } while (0)
#else
#define KILN_ASSERT(cond) ((void)0)
#endif
