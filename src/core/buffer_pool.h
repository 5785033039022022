// A size-class buffer pool shared by every backend's device and host allocations. Backends supply the raw
// allocate/release functions (cudaMalloc, clCreateBuffer, cudaHostAlloc, ...); the pool rounds requests up to a
// size class, reuses released blocks of the same class, never holds more than its budget, and reports
// current/peak bytes. The raw functions are called outside the pool's lock. A handle is an opaque integer (a
// pointer, or a cl_mem cast to uintptr_t).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

struct PoolBlock {
  uintptr_t handle = 0;
  size_t bytes = 0;  // the size class actually allocated
  explicit operator bool() const { return handle != 0; }
};

struct PoolStats {
  size_t budget = 0;        // 0 = unlimited
  size_t held_bytes = 0;    // allocated from the device/driver (in use + cached)
  size_t in_use_bytes = 0;  // handed out and not yet released
  size_t peak_held_bytes = 0;
  uint64_t allocations = 0;  // calls to the raw allocator
  uint64_t reuses = 0;       // requests served from the cache
};

class BufferPool {
 public:
  using AllocateFn = std::function<Result<uintptr_t>(size_t bytes)>;
  using ReleaseFn = std::function<void(uintptr_t handle, size_t bytes)>;

  BufferPool() = default;
  BufferPool(std::string name, AllocateFn allocate, ReleaseFn release, size_t budget = 0);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // OutOfMemory when the request cannot fit in the budget even after dropping cached blocks, or when the raw
  // allocator fails (cached blocks are dropped and the allocation retried once first).
  Result<PoolBlock> acquire(size_t bytes);
  void release(PoolBlock block);
  // Frees every cached (not in use) block.
  void trim();
  PoolStats stats() const;
  const std::string& name() const { return m_name; }

  // Size classes: powers of two up to 1 MiB, then multiples of 1/4 of the next power of two.
  static size_t size_class(size_t bytes);

 private:
  struct CachedBlock {
    size_t bytes;
    uintptr_t handle;
  };
  // Takes cached blocks out (largest first) until at most `target_held` bytes are held; the caller releases them
  // with release_all once the lock is let go.
  void take_cached_locked(size_t target_held, std::vector<CachedBlock>* dropped);
  void release_all(std::vector<CachedBlock>& dropped);

  std::string m_name;
  AllocateFn m_allocate;
  ReleaseFn m_release;
  mutable std::mutex m_mutex;
  std::multimap<size_t, uintptr_t> m_free;  // size class -> cached handle
  PoolStats m_stats;
};

}  // namespace kiln
