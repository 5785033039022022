// Objects lent to one user at a time and kept for the next (GPU streams, encoders): acquire() hands out an idle
// one, or makes one; the lease gives it back when it ends. Thread-safe.
#pragma once

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

  explicit LendingPool(MakeFn make) : m_make(std::move(make)) {}
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
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_idle.empty()) {
        std::unique_ptr<T> object = std::move(m_idle.back());
        m_idle.pop_back();
        return Lease(this, std::move(object));
      }
    }
    KILN_TRY_ASSIGN(std::unique_ptr<T> made, m_make());
    return Lease(this, std::move(made));
  }

  // Destroys the idle objects (leases out keep theirs and return them later).
  void clear() {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_idle.clear();
  }

 private:
  void put(std::unique_ptr<T> object) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_idle.push_back(std::move(object));
  }

  MakeFn m_make;
  std::mutex m_mutex;
  std::vector<std::unique_ptr<T>> m_idle;
};

}  // namespace kiln
