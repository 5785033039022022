#include "core/buffer_pool.h"

#include <algorithm>
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

// The allocator and the release function run outside the lock: cudaMalloc and cudaFree take milliseconds (cudaFree
// waits for the whole device), and other threads' reuses and releases need not wait for them. A block being
// allocated counts as held and in use from the start, so concurrent requests see the budget it takes.
Result<PoolBlock> BufferPool::acquire(size_t bytes) {
  const size_t cls = size_class(bytes);
  std::vector<CachedBlock> dropped;
  {
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
    if (m_stats.budget > 0 && m_stats.held_bytes + cls > m_stats.budget) {
      take_cached_locked(m_stats.budget - cls, &dropped);
    }
    m_stats.held_bytes += cls;
    m_stats.in_use_bytes += cls;
  }
  release_all(dropped);
  auto handle = m_allocate(cls);
  if (!handle.is_ok()) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      take_cached_locked(0, &dropped);
    }
    release_all(dropped);
    handle = m_allocate(cls);
  }
  std::lock_guard<std::mutex> lock(m_mutex);
  if (!handle.is_ok()) {
    m_stats.held_bytes -= cls;
    m_stats.in_use_bytes -= cls;
    return Status(Errc::kOutOfMemory, m_name + ": " + handle.status().message());
  }
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
  std::vector<CachedBlock> dropped;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    take_cached_locked(0, &dropped);
  }
  release_all(dropped);
}

void BufferPool::take_cached_locked(size_t target_held, std::vector<CachedBlock>* dropped) {
  // Largest cached blocks first: they free the most with the fewest driver calls.
  while (m_stats.held_bytes > target_held && !m_free.empty()) {
    auto it = std::prev(m_free.end());
    dropped->push_back({it->first, it->second});
    m_stats.held_bytes -= it->first;
    m_free.erase(it);
  }
}

void BufferPool::release_all(std::vector<CachedBlock>& dropped) {
  for (const CachedBlock& block : dropped) m_release(block.handle, block.bytes);
  dropped.clear();
}

PoolStats BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_stats;
}

}  // namespace kiln
