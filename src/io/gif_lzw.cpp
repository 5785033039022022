#include "io/gif_lzw.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace kiln {

namespace {

constexpr int32_t kMaxCodes = 4096;  // 12-bit codes

// A code's string is somewhere in the output already: `len` bytes at `pos`.
struct CodeString {
  uint32_t pos;
  uint32_t len;
};

// Copies `len` bytes written earlier (at `from`, ending at or before `to`) to `to`; 16 at a time where both the
// source and the room after `to` allow it (the bytes past `len` are written again later).
inline void copy_earlier(uint8_t* out, size_t from, size_t to, size_t len, size_t count) {
  if (len <= 16 && to + 16 <= count && from + 16 <= to) {
    std::memcpy(out + to, out + from, 16);
  } else {
    std::memcpy(out + to, out + from, len);
  }
}

}  // namespace

Status gif_lzw_decode(const std::vector<uint8_t>& data, int32_t min_code_size, uint8_t* out, size_t count,
                      const Deadline& deadline) {
  if (min_code_size < 2 || min_code_size > 8) {
    return unsupported_format("gif: LZW code size " + std::to_string(min_code_size) + " (2-8)");
  }
  const uint32_t clear = 1u << min_code_size;
  const uint32_t end = clear + 1;
  static thread_local CodeString table[kMaxCodes];
  uint32_t next = clear + 2;
  int32_t size = min_code_size + 1;
  uint32_t mask = (1u << size) - 1;
  bool have_prev = false;
  CodeString prev{0, 0};
  size_t at = 0;
  uint64_t bits = 0;
  int32_t held = 0;
  const uint8_t* p = data.data();
  const uint8_t* const stop = p + data.size();
  for (uint32_t n = 0; at < count; ++n) {
    if ((n & 4095) == 0 && deadline.passed()) return unsupported_format("gif: took longer than the decode timeout");
    while (held < size && p < stop) {
      bits |= uint64_t{*p++} << held;
      held += 8;
    }
    if (held < size) break;
    const uint32_t code = static_cast<uint32_t>(bits) & mask;
    bits >>= size;
    held -= size;
    if (code == clear) {
      next = clear + 2;
      size = min_code_size + 1;
      mask = (1u << size) - 1;
      have_prev = false;
      continue;
    }
    if (code == end) break;
    CodeString emitted{static_cast<uint32_t>(at), 1};
    if (code < clear) {
      out[at] = static_cast<uint8_t>(code);
    } else if (code < next) {
      const CodeString s = table[code];
      emitted.len = s.len;
      const size_t len = std::min<size_t>(s.len, count - at);
      copy_earlier(out, s.pos, at, len, count);
    } else if (code == next && have_prev) {  // the string being defined: the previous one and its own first byte
      emitted.len = prev.len + 1;
      const size_t len = std::min<size_t>(emitted.len, count - at);
      std::memmove(out + at, out + prev.pos, std::min<size_t>(prev.len, len));
      if (len > prev.len) out[at + prev.len] = out[prev.pos];
    } else {
      return unsupported_format("gif: damaged image data (code " + std::to_string(code) + " before it was defined)");
    }
    if (have_prev && next < kMaxCodes) {
      table[next++] = CodeString{prev.pos, prev.len + 1};  // followed by this string's first byte, written just after
      if (next == (1u << size) && size < 12) {
        ++size;
        mask = (1u << size) - 1;
      }
    }
    prev = emitted;
    have_prev = true;
    at += emitted.len;
  }
  if (at < count) {
    return unsupported_format("gif: image data ends early (" + std::to_string(at) + " of " + std::to_string(count) +
                              " pixels)");
  }
  return Status::ok();
}

}  // namespace kiln
