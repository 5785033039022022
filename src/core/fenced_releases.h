// Things to let go once a fence has passed (device memory another library read, held until a CUDA event recorded
// after its reads completes): the holder of the memory is kept here instead of making the releasing thread wait.
// collect() drops what has passed without waiting; drain() waits for every fence. Thread-safe; the things are
// dropped outside the lock, so dropping one may call back into whatever owns this (a pool taking memory back).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace kiln {

class FencedReleases {
 public:
  using Fence = uintptr_t;
  struct FenceOps {
    std::function<bool(Fence)> passed;  // never waits
    std::function<void(Fence)> wait;
    std::function<void(Fence)> destroy;
  };

  explicit FencedReleases(FenceOps ops) : m_ops(std::move(ops)) {}
  FencedReleases(const FencedReleases&) = delete;
  FencedReleases& operator=(const FencedReleases&) = delete;
  ~FencedReleases() { drain(); }

  // Holds `keep` until `fence` has passed (the fence is destroyed then), and collects what passed before.
  void add(Fence fence, std::shared_ptr<const void> keep) {
    {
      const std::lock_guard lock(m_mutex);
      m_held.push_back({fence, std::move(keep)});
    }
    collect();
  }

  // Drops the things whose fence has passed; returns how many are still held.
  size_t collect() {
    std::vector<Held> passed;
    size_t still_held = 0;
    {
      const std::lock_guard lock(m_mutex);
      std::vector<Held> waiting;
      for (Held& held : m_held) (m_ops.passed(held.fence) ? passed : waiting).push_back(std::move(held));
      m_held = std::move(waiting);
      still_held = m_held.size();
    }
    release(passed);
    return still_held;
  }

  // Waits for every fence and drops everything.
  void drain() {
    std::vector<Held> all;
    {
      const std::lock_guard lock(m_mutex);
      all.swap(m_held);
    }
    for (const Held& held : all) m_ops.wait(held.fence);
    release(all);
  }

 private:
  struct Held {
    Fence fence;
    std::shared_ptr<const void> keep;
  };

  void release(std::vector<Held>& held) {
    for (Held& h : held) {
      m_ops.destroy(h.fence);
      h.keep.reset();
    }
  }

  FenceOps m_ops;
  std::mutex m_mutex;
  std::vector<Held> m_held;
};

}  // namespace kiln
