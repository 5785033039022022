// Process-wide profiler: scoped ranges, counters and flow events, recorded into per-thread buffers.
//
// Disabled (the default), every recording call costs one relaxed atomic load and a branch. Enabled, a
// range costs two steady_clock reads and one append to the calling thread's buffer, without a lock.
// Names passed to the recording calls must outlive the profiler (string literals); intern run-time
// names once with profile_intern(). Export with trace_write_chrome() (trace_export.h) and summarize
// with profile_summary_table() (profile_summary.h).
//
// With KILN_HAS_NVTX (the CUDA backend target), KILN_PROFILE_SCOPE also pushes an NVTX range, so
// ranges show up in Nsight Systems; with KILN_PROFILE_OFF the macros compile to nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "kiln/status.h"  // KILN_CONCAT

#if defined(KILN_HAS_NVTX) && KILN_HAS_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace kiln {

enum class ProfileEventKind : uint8_t {
  kComplete,   // a range: ts_ns .. ts_ns + dur_ns
  kCounter,    // value at ts_ns
  kFlowBegin,  // flow id leaves the enclosing range at ts_ns
  kFlowEnd,    // flow id arrives in the enclosing range at ts_ns
};

struct ProfileEvent {
  const char* name = nullptr;
  int64_t ts_ns = 0;    // steady_clock nanoseconds
  int64_t dur_ns = 0;   // kComplete only
  uint64_t id = 0;      // kFlowBegin / kFlowEnd only
  double value = 0.0;   // kCounter only
  ProfileEventKind kind = ProfileEventKind::kComplete;
};

// One thread's events, copied out by Profiler::snapshot(); tid is a small integer, 1 for the first thread
// that recorded.
struct ProfileThreadEvents {
  uint32_t tid = 0;
  std::string name;
  std::vector<ProfileEvent> events;
};

namespace detail {
struct ProfileThreadBuffer;
inline std::atomic<bool> g_profiler_enabled{false};
}  // namespace detail

inline bool profiler_enabled() { return detail::g_profiler_enabled.load(std::memory_order_relaxed); }

inline int64_t profile_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Profiler {
 public:
  // Never destroyed, so ranges in static destructors and exiting threads stay safe.
  static Profiler& instance();

  void enable(bool on) { detail::g_profiler_enabled.store(on, std::memory_order_relaxed); }
  static bool enabled() { return profiler_enabled(); }

  // Names the calling thread in the trace ("ph":"M" thread_name); works enabled or not.
  void set_thread_name(std::string name);
  // Drops every recorded event and the buffers of threads that have exited. Threads that still run keep
  // their tid and name. Events recorded concurrently with clear() may survive it.
  void clear();
  // Disables and clears.
  void reset();

  // Copies every thread's events (in recording order) out; safe while other threads record.
  std::vector<ProfileThreadEvents> snapshot() const;

  // Appends to the calling thread's buffer without checking enabled(): the recording functions below
  // check. record_complete is also the hook tests and GPU timers use to inject ranges with known times.
  void record(const ProfileEvent& event);
  void record_complete(const char* name, int64_t begin_ns, int64_t end_ns);

  // Stable storage for a run-time name; the same text always gives the same pointer.
  const char* intern(std::string_view name);

  // Steady-clock ns that trace timestamps count from (process start, roughly).
  int64_t epoch_ns() const { return m_epoch_ns; }

 private:
  Profiler();
  ~Profiler() = default;
  detail::ProfileThreadBuffer* thread_buffer();
  detail::ProfileThreadBuffer* register_thread();

  mutable std::mutex m_mutex;  // guards m_buffers, buffer heads and names, m_next_tid
  std::vector<std::unique_ptr<detail::ProfileThreadBuffer>> m_buffers;
  uint32_t m_next_tid = 1;
  std::mutex m_intern_mutex;
  std::unordered_set<std::string> m_interned;
  int64_t m_epoch_ns = 0;
};

// Scoped range: records a complete event from construction to destruction when the profiler is enabled
// at construction. Use through KILN_PROFILE_SCOPE.
class ProfileScope {
 public:
  explicit ProfileScope(const char* name) noexcept {
    if (profiler_enabled()) [[unlikely]] {
      m_name = name;
      m_begin_ns = profile_now_ns();
    }
  }
  ~ProfileScope() {
    if (m_name != nullptr) [[unlikely]] Profiler::instance().record_complete(m_name, m_begin_ns, profile_now_ns());
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  const char* m_name = nullptr;
  int64_t m_begin_ns = 0;
};

// Records a counter sample ("ph":"C"), e.g. queue depth or pool bytes.
inline void profile_counter(const char* name, double value) {
  if (profiler_enabled()) [[unlikely]] {
    ProfileEvent event;
    event.kind = ProfileEventKind::kCounter;
    event.name = name;
    event.ts_ns = profile_now_ns();
    event.value = value;
    Profiler::instance().record(event);
  }
}

// Links one sample across stages: call profile_flow_begin inside the producing range and
// profile_flow_end inside the consuming one, with the same name and id (the sample id).
inline void profile_flow(ProfileEventKind kind, const char* name, uint64_t id) {
  if (profiler_enabled()) [[unlikely]] {
    ProfileEvent event;
    event.kind = kind;
    event.name = name;
    event.ts_ns = profile_now_ns();
    event.id = id;
    Profiler::instance().record(event);
  }
}
inline void profile_flow_begin(const char* name, uint64_t id) { profile_flow(ProfileEventKind::kFlowBegin, name, id); }
inline void profile_flow_end(const char* name, uint64_t id) { profile_flow(ProfileEventKind::kFlowEnd, name, id); }

inline const char* profile_intern(std::string_view name) { return Profiler::instance().intern(name); }

#if defined(KILN_HAS_NVTX) && KILN_HAS_NVTX
// Pushes an NVTX range for the scope while the profiler is enabled (Nsight Systems shows it).
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) noexcept : m_active(profiler_enabled()) {
    if (m_active) nvtxRangePushA(name);
  }
  ~NvtxRange() {
    if (m_active) nvtxRangePop();
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  bool m_active;
};
#endif

}  // namespace kiln

#if defined(KILN_PROFILE_OFF)
#define KILN_PROFILE_SCOPE(name) ((void)0)
#elif defined(KILN_HAS_NVTX) && KILN_HAS_NVTX
#define KILN_PROFILE_SCOPE(name)                                         \
  ::kiln::ProfileScope KILN_CONCAT(kiln_profile_scope_, __LINE__)(name); \
  ::kiln::NvtxRange KILN_CONCAT(kiln_nvtx_range_, __LINE__)(name)
#else
#define KILN_PROFILE_SCOPE(name) ::kiln::ProfileScope KILN_CONCAT(kiln_profile_scope_, __LINE__)(name)
#endif
