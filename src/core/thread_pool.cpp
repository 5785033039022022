#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <memory>

namespace kiln {

namespace {

// Waking a sleeping thread costs tens of microseconds on a virtual machine (an interrupt to a halted vCPU), as much
// as a small image's whole op. So a worker that finished a task, and a caller waiting for its workers, poll for this
// long before they sleep: back-to-back calls (a batch of ops, the blocks of one call) then never wait for a wake-up.
// OpenMP runtimes and OpenCV's pool spin the same way, for longer.
constexpr std::chrono::microseconds kSpin{100};
// Workers polling at once, at most.
constexpr int32_t kMaxSpinning = 2;

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

}  // namespace

// One parallel_for call's range, shared with the tasks it submitted. The caller waits until every item is done, not
// until every task has run: a task that a busy or descheduled worker starts late finds the range exhausted and returns
// without touching the caller's function (on 16 cores shared with ONNX Runtime's threads, waiting for such tasks made
// kiln segment's per-frame matte take milliseconds). The tasks hold the range by shared_ptr, so it outlives the call.
class SharedRange {
 public:
  SharedRange(int64_t n, int64_t grain, int64_t helpers, const std::function<void(int64_t, int64_t)>& fn)
      : m_n(n), m_grain(grain), m_helpers(helpers), m_fn(&fn) {}

  // Whether one more helper should be asked for: each one that starts asks for two more while items are left, so
  // the helpers double in log2(workers) steps and no worker is woken only to find the range done.
  bool helper_wanted() {
    return m_next.load(std::memory_order_relaxed) < m_n && m_helpers.fetch_sub(1, std::memory_order_relaxed) > 0;
  }

  // Claims and runs blocks until none is left.
  void drain() {
    for (;;) {
      const int64_t begin = m_next.fetch_add(m_grain, std::memory_order_relaxed);
      if (begin >= m_n) return;
      const int64_t end = std::min(m_n, begin + m_grain);
      (*m_fn)(begin, end);
      if (m_done.fetch_add(end - begin, std::memory_order_acq_rel) + (end - begin) == m_n) {
        std::lock_guard<std::mutex> lock(m_mutex);  // the caller checks under the lock: no lost wake-up
        m_cv.notify_one();
      }
    }
  }

  // Polled first, then asleep.
  void wait() {
    const auto finished = [this] { return m_done.load(std::memory_order_acquire) == m_n; };
    if (spin_until(finished)) return;
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, finished);
  }

 private:
  const int64_t m_n, m_grain;
  std::atomic<int64_t> m_helpers;  // helpers not yet asked for
  const std::function<void(int64_t, int64_t)>* m_fn;  // called only while the caller waits (items are left)
  std::atomic<int64_t> m_next{0}, m_done{0};
  std::mutex m_mutex;
  std::condition_variable m_cv;
};

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
    // A few workers poll for the next task; the rest sleep at once. Sixteen workers polling after every small call
    // took cores from the threads that had work (ONNX Runtime's, the encoder's) on a 16-core host.
    bool seen = false;
    if (m_spinning.fetch_add(1, std::memory_order_acq_rel) < kMaxSpinning) {
      seen = spin_until([this] {
        return m_queued.load(std::memory_order_acquire) > 0 || m_stopping.load(std::memory_order_relaxed);
      });
    }
    m_spinning.fetch_sub(1, std::memory_order_acq_rel);
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

void ThreadPool::helper_submit(const std::shared_ptr<SharedRange>& range) {
  if (!range->helper_wanted()) return;
  submit([this, range] {
    helper_submit(range);
    helper_submit(range);
    range->drain();
  });
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
  auto range = std::make_shared<SharedRange>(n, grain, blocks - 1, fn);
  helper_submit(range);
  helper_submit(range);
  range->drain();
  range->wait();
}

void parallel_for(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t min_block) {
  if (pool != nullptr) {
    pool->parallel_for(n, fn, min_block);
  } else if (n > 0) {
    fn(0, n);
  }
}

}  // namespace kiln
