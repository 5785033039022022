// Fixed-size worker pool. parallel_for splits [0, n) into contiguous blocks, one task per worker.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

class SharedRange;

class ThreadPool {
 public:
  // threads <= 0: one per hardware thread.
  explicit ThreadPool(int32_t threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int32_t size() const { return static_cast<int32_t>(m_workers.size()); }
  void submit(std::function<void()> task);
  // Runs fn(begin, end) over blocks of [0, n) on the pool and the calling thread; returns when all are done.
  // Blocks hold at least min_block items: work too small to pay for waking a worker runs on the caller alone.
  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn, int64_t min_block = 1);

  static int32_t hardware_threads();
  // min_block for image rows of values_per_row output values: a block writes at least 64K values (tens of
  // microseconds), so a small image is not split over threads that cost more to wake than they save.
  static int64_t min_rows(int64_t values_per_row) {
    constexpr int64_t kValuesPerBlock = 65536;
    return values_per_row <= 0 ? 1 : (kValuesPerBlock + values_per_row - 1) / values_per_row;
  }

 private:
  void worker_loop();
  // A task that first asks for two more helpers, then claims blocks of `range` (parallel_for).
  void helper_submit(const std::shared_ptr<SharedRange>& range);

  std::vector<std::thread> m_workers;
  std::deque<std::function<void()>> m_tasks;
  std::atomic<int64_t> m_queued{0};  // m_tasks.size(), read without the lock by spinning workers
  std::atomic<bool> m_stopping{false};
  std::atomic<int32_t> m_spinning{0};  // workers polling for a task now
  int32_t m_sleeping = 0;  // workers waiting on m_cv; guarded by m_mutex
  std::mutex m_mutex;
  std::condition_variable m_cv;
};

// pool->parallel_for(n, fn, min_block), or fn(0, n) on the calling thread where there is no pool.
void parallel_for(ThreadPool* pool, int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn,
                  int64_t min_block = 1);

}  // namespace kiln
