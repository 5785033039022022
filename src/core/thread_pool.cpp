#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <latch>

namespace kiln {

int32_t ThreadPool::hardware_threads() {
  return std::max<int32_t>(1, static_cast<int32_t>(std::thread::hardware_concurrency()));
}

ThreadPool::ThreadPool(int32_t threads) {
  const int32_t count = threads > 0 ? threads : hardware_threads();
  m_workers.reserve(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) m_workers.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_cv.notify_all();
  for (auto& worker : m_workers) worker.join();
}

void ThreadPool::submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_tasks.push_back(std::move(task));
  }
  m_cv.notify_one();
}

void ThreadPool::worker_loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_cv.wait(lock, [this] { return m_stopping || !m_tasks.empty(); });
      if (m_tasks.empty()) return;
      task = std::move(m_tasks.front());
      m_tasks.pop_front();
    }
    task();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t min_block) {
  if (n <= 0) return;
  min_block = std::max<int64_t>(1, min_block);
  const int64_t blocks = std::min<int64_t>(n / min_block, size());
  if (blocks <= 1) {
    fn(0, n);
    return;
  }
  // Dynamic blocks: workers (and the caller) claim small ranges, so uneven images balance out.
  const int64_t grain = std::max<int64_t>(min_block, n / (blocks * 4));
  std::atomic<int64_t> next{0};
  auto drain = [&] {
    for (;;) {
      const int64_t begin = next.fetch_add(grain);
      if (begin >= n) return;
      fn(begin, std::min(n, begin + grain));
    }
  };
  std::latch done(blocks - 1);
  for (int64_t i = 0; i < blocks - 1; ++i) {
    submit([&] {
      drain();
      done.count_down();
    });
  }
  drain();
  done.wait();
}

}  // namespace kiln
