// Objects lent to one user at a time and kept for the next (GPU streams, encoders, pinned staging slots): acquire()
// hands out an idle one, or makes one; the lease gives it back when it ends. With a limit, at most that many exist:
// acquire() then waits for a lease to end (a ring of staging buffers whose memory stays bounded). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "kiln/status.h"

namespace kiln {

template <typename T>
class LendingPool {
 public:
  using MakeFn = std::function<Result<std::unique_ptr<T>>()>;

  // limit 0: no limit.
  explicit LendingPool(MakeFn make, int64_t limit = 0) : m_make(std::move(make)), m_limit(limit) {}
  LendingPool(const LendingPool&) = delete;
  LendingPool& operator=(const LendingPool&) = delete;

  class Lease {
   public:
    Lease(LendingPool* pool, std::unique_ptr<T> object) : m_pool(pool), m_object(std::move(object)) {}
    Lease(Lease&& other) noexcept : m_pool(std::exchange(other.m_pool, nullptr)), m_object(std::move(other.m_object)) {}
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (m_pool != nullptr && m_object) m_pool->put(std::move(m_object));
    }
    T* get() const { return m_object.get(); }
    T* operator->() const { return m_object.get(); }
    T& operator*() const { return *m_object; }

   private:
    LendingPool* m_pool;
    std::unique_ptr<T> m_object;
  };

  Result<Lease> acquire() {
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_returned.wait(lock, [&] { return !m_idle.empty() || m_limit <= 0 || m_made < m_limit; });
      if (!m_idle.empty()) {
        std::unique_ptr<T> object = std::move(m_idle.back());
        m_idle.pop_back();
        return Lease(this, std::move(object));
      }
      ++m_made;  // counted before it is made, so that concurrent callers stay within the limit
    }
    auto made = m_make();
    if (!made.is_ok()) {
      std::lock_guard<std::mutex> lock(m_mutex);
      --m_made;
      m_returned.notify_one();
      return made.status();
    }
    return Lease(this, std::move(made).value());
  }

  // Destroys the idle objects (leases out keep theirs and return them later).
  void clear() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_made -= static_cast<int64_t>(m_idle.size());
      m_idle.clear();
    }
    m_returned.notify_all();  // room for new ones under the limit
  }

  // Objects in existence: lent out or idle.
  int64_t made() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_made;
  }

 private:
  void put(std::unique_ptr<T> object) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_idle.push_back(std::move(object));
    }
    m_returned.notify_one();
  }

  MakeFn m_make;
  int64_t m_limit = 0;
  mutable std::mutex m_mutex;
  std::condition_variable m_returned;
  std::vector<std::unique_ptr<T>> m_idle;
  int64_t m_made = 0;
};

}  // namespace kiln
