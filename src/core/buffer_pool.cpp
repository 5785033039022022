#include "core/buffer_pool.h"

#include <bit>

namespace kiln {

BufferPool::BufferPool(std::string name, AllocateFn allocate, ReleaseFn release, size_t budget)
    : m_name(std::move(name)), m_allocate(std::move(allocate)), m_release(std::move(release)) {
  m_stats.budget = budget;
}

BufferPool::~BufferPool() { trim(); }

size_t BufferPool::size_class(size_t bytes) {
  constexpr size_t kSmall = size_t{1} << 20;
  if (bytes <= 256) return 256;
  if (bytes <= kSmall) return std::bit_ceil(bytes);
  const size_t quarter = std::bit_ceil(bytes) / 4;
  return (bytes + quarter - 1) / quarter * quarter;
}

Result<PoolBlock> BufferPool::acquire(size_t bytes) {
  const size_t cls = size_class(bytes);
  std::lock_guard<std::mutex> lock(m_mutex);
  if (auto it = m_free.find(cls); it != m_free.end()) {
    const uintptr_t handle = it->second;
    m_free.erase(it);
    m_stats.in_use_bytes += cls;
    ++m_stats.reuses;
    return PoolBlock{handle, cls};
  }
  if (m_stats.budget > 0 && m_stats.in_use_bytes + cls > m_stats.budget) {
    return Status(Errc::kOutOfMemory, m_name + ": " + std::to_string(cls) + " bytes would exceed the budget of " +
                                          std::to_string(m_stats.budget) + " bytes (" +
                                          std::to_string(m_stats.in_use_bytes) + " in use)");
  }
  if (m_stats.budget > 0 && m_stats.held_bytes + cls > m_stats.budget) trim_locked(m_stats.budget - cls);
  auto handle = m_allocate(cls);
  if (!handle.is_ok()) {
    trim_locked(0);
    handle = m_allocate(cls);
    if (!handle.is_ok()) return Status(Errc::kOutOfMemory, m_name + ": " + handle.status().message());
  }
  m_stats.held_bytes += cls;
  m_stats.in_use_bytes += cls;
  m_stats.peak_held_bytes = std::max(m_stats.peak_held_bytes, m_stats.held_bytes);
  ++m_stats.allocations;
  return PoolBlock{handle.value(), cls};
}

void BufferPool::release(PoolBlock block) {
  if (!block) return;
  std::lock_guard<std::mutex> lock(m_mutex);
  m_stats.in_use_bytes -= block.bytes;
  m_free.emplace(block.bytes, block.handle);
}

void BufferPool::trim() {
  std::lock_guard<std::mutex> lock(m_mutex);
  trim_locked(0);
}

void BufferPool::trim_locked(size_t target_held) {
  // Largest cached blocks first: they free the most with the fewest driver calls.
  while (m_stats.held_bytes > target_held && !m_free.empty()) {
    auto it = std::prev(m_free.end());
    m_release(it->second, it->first);
    m_stats.held_bytes -= it->first;
    m_free.erase(it);
  }
}

PoolStats BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_stats;
}

}  // namespace kiln
