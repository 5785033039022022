// The calling thread's float mode (x86 MXCSR) for a scope: restored on exit; with flush, subnormal inputs and
// results are taken as zero meanwhile (flush-to-zero and denormals-are-zero). For inference runs that should not
// crawl on subnormal weights, and to keep a library that sets the mode from leaving it set on kiln's threads.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace kiln {

class FloatModeScope {
 public:
  explicit FloatModeScope(bool flush) {
#if defined(__x86_64__) || defined(__i386__)
    m_saved = _mm_getcsr();
    constexpr unsigned kFlushToZero = 0x8000;
    constexpr unsigned kDenormalsAreZero = 0x0040;
    if (flush) _mm_setcsr(m_saved | kFlushToZero | kDenormalsAreZero);
#else
    (void)flush;
#endif
  }
  ~FloatModeScope() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(m_saved);
#endif
  }
  FloatModeScope(const FloatModeScope&) = delete;
  FloatModeScope& operator=(const FloatModeScope&) = delete;

 private:
  unsigned m_saved = 0;
};

}  // namespace kiln
