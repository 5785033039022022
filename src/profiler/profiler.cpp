#include "profiler/profiler.h"

namespace kiln {
namespace detail {

// Fixed-size block of events. Only the owning thread writes; it publishes each event with a release
// store of count and each new block with a release store of next, so readers never see a partial event.
struct ProfileEventChunk {
  static constexpr uint32_t kCapacity = 4096;
  ProfileEvent events[kCapacity];
  std::atomic<uint32_t> count{0};
  std::atomic<ProfileEventChunk*> next{nullptr};
};

// A thread's append-only chunk list. m_tail belongs to the owning thread; m_head, m_head_start and m_name
// belong to readers and are guarded by the profiler's mutex. The owner never goes back to a chunk once
// it has linked a successor, so readers may free every chunk but the last.
struct ProfileThreadBuffer {
  explicit ProfileThreadBuffer(uint32_t thread_id) : tid(thread_id), head(new ProfileEventChunk), tail(head) {}
  ~ProfileThreadBuffer() {
    ProfileEventChunk* chunk = head;
    while (chunk != nullptr) {
      ProfileEventChunk* next = chunk->next.load(std::memory_order_acquire);
      delete chunk;
      chunk = next;
    }
  }
  ProfileThreadBuffer(const ProfileThreadBuffer&) = delete;
  ProfileThreadBuffer& operator=(const ProfileThreadBuffer&) = delete;

  void append(const ProfileEvent& event) {
    uint32_t n = tail->count.load(std::memory_order_relaxed);
    if (n == ProfileEventChunk::kCapacity) [[unlikely]] {
      auto* chunk = new ProfileEventChunk;
      tail->next.store(chunk, std::memory_order_release);
      tail = chunk;
      n = 0;
    }
    tail->events[n] = event;
    tail->count.store(n + 1, std::memory_order_release);
  }

  const uint32_t tid;
  std::string name;                 // guarded by Profiler::m_mutex
  ProfileEventChunk* head;          // guarded by Profiler::m_mutex
  uint32_t head_start = 0;          // events of head before this index were cleared
  ProfileEventChunk* tail;          // owner thread only
  std::atomic<bool> exited{false};  // set by the owner when its thread ends
};

namespace {

// Per-thread handle; marks the buffer exited when the thread ends (the profiler keeps its events).
struct ThreadSlot {
  ProfileThreadBuffer* buffer = nullptr;
  ~ThreadSlot() {
    if (buffer != nullptr) buffer->exited.store(true, std::memory_order_release);
    buffer = nullptr;  // a range in a later thread_local destructor registers afresh instead of using a freed buffer
  }
};

thread_local ThreadSlot t_slot;

}  // namespace
}  // namespace detail

Profiler& Profiler::instance() {
  static Profiler* profiler = new Profiler();  // intentionally leaked
  return *profiler;
}

Profiler::Profiler() : m_epoch_ns(profile_now_ns()) {}

detail::ProfileThreadBuffer* Profiler::thread_buffer() {
  detail::ThreadSlot& slot = detail::t_slot;
  if (slot.buffer == nullptr) [[unlikely]] slot.buffer = register_thread();
  return slot.buffer;
}

detail::ProfileThreadBuffer* Profiler::register_thread() {
  std::lock_guard lock(m_mutex);
  m_buffers.push_back(std::make_unique<detail::ProfileThreadBuffer>(m_next_tid++));
  return m_buffers.back().get();
}

void Profiler::record(const ProfileEvent& event) { thread_buffer()->append(event); }

void Profiler::record_complete(const char* name, int64_t begin_ns, int64_t end_ns) {
  ProfileEvent event;
  event.kind = ProfileEventKind::kComplete;
  event.name = name;
  event.ts_ns = begin_ns;
  event.dur_ns = end_ns >= begin_ns ? end_ns - begin_ns : 0;
  thread_buffer()->append(event);
}

void Profiler::set_thread_name(std::string name) {
  detail::ProfileThreadBuffer* buffer = thread_buffer();
  std::lock_guard lock(m_mutex);
  buffer->name = std::move(name);
}

void Profiler::clear() {
  std::lock_guard lock(m_mutex);
  std::erase_if(m_buffers, [](const std::unique_ptr<detail::ProfileThreadBuffer>& buffer) {
    return buffer->exited.load(std::memory_order_acquire);
  });
  for (auto& buffer : m_buffers) {
    detail::ProfileEventChunk* chunk = buffer->head;
    while (detail::ProfileEventChunk* next = chunk->next.load(std::memory_order_acquire)) {
      delete chunk;
      chunk = next;
    }
    buffer->head = chunk;
    buffer->head_start = chunk->count.load(std::memory_order_acquire);
  }
}

void Profiler::reset() {
  enable(false);
  clear();
}

std::vector<ProfileThreadEvents> Profiler::snapshot() const {
  std::lock_guard lock(m_mutex);
  std::vector<ProfileThreadEvents> out;
  out.reserve(m_buffers.size());
  for (const auto& buffer : m_buffers) {
    ProfileThreadEvents& thread = out.emplace_back();
    thread.tid = buffer->tid;
    thread.name = buffer->name;
    uint32_t start = buffer->head_start;
    for (const detail::ProfileEventChunk* chunk = buffer->head; chunk != nullptr;
         chunk = chunk->next.load(std::memory_order_acquire)) {
      uint32_t count = chunk->count.load(std::memory_order_acquire);
      for (uint32_t i = start; i < count; ++i) thread.events.push_back(chunk->events[i]);
      start = 0;
    }
  }
  return out;
}

const char* Profiler::intern(std::string_view name) {
  std::lock_guard lock(m_intern_mutex);
  return m_interned.emplace(name).first->c_str();
}

}  // namespace kiln
