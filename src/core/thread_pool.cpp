#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace kiln {

namespace {

// Waking a sleeping thread costs tens of microseconds on a virtual machine (an interrupt to a halted vCPU), as much
// as a small image's whole op. So a worker that finished a task, and a caller waiting for its workers, poll for this
// long before they sleep: back-to-back calls (a batch of ops, the blocks of one call) then never wait for a wake-up.
// OpenMP runtimes and OpenCV's pool spin the same way, for longer.
constexpr std::chrono::microseconds kSpin{100};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

template <typename Ready>
bool spin_until(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

// The caller's wait for its blocks: polled first, then asleep. count_down holds the mutex, so a caller that saw zero
// while polling takes the mutex once before returning and the object outlives the last count_down.
class Completion {
 public:
  explicit Completion(int64_t count) : m_remaining(count) {}
  void count_down() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) m_cv.notify_one();
  }
  void wait() {
    spin_until([this] { return m_remaining.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [this] { return m_remaining.load(std::memory_order_acquire) == 0; });
  }

 private:
  std::atomic<int64_t> m_remaining;
  std::mutex m_mutex;
  std::condition_variable m_cv;
};

}  // namespace

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
    m_stopping.store(true, std::memory_order_relaxed);
  }
  m_cv.notify_all();
  for (auto& worker : m_workers) worker.join();
}

void ThreadPool::submit(std::function<void()> task) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_tasks.push_back(std::move(task));
    m_queued.fetch_add(1, std::memory_order_release);
    wake = m_sleeping > 0;
  }
  if (wake) m_cv.notify_one();
}

void ThreadPool::worker_loop() {
  const auto ready = [this] { return m_stopping.load(std::memory_order_relaxed) || !m_tasks.empty(); };
  for (;;) {
    const bool seen = spin_until(
        [this] { return m_queued.load(std::memory_order_acquire) > 0 || m_stopping.load(std::memory_order_relaxed); });
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      if (!ready()) {
        if (seen) continue;  // another worker took it: poll again
        ++m_sleeping;
        m_cv.wait(lock, ready);
        --m_sleeping;
      }
      if (m_tasks.empty()) return;
      task = std::move(m_tasks.front());
      m_tasks.pop_front();
      m_queued.fetch_sub(1, std::memory_order_relaxed);
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
  Completion done(blocks - 1);
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
