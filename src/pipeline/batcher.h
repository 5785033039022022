// Dynamic batcher with Triton semantics: preferred batch sizes, max queue delay, priority
// levels (FIFO within a level), per-request timeouts (REJECT / DELAY), a bounded queue and
// a per-batch byte budget.
//
// Ordering: level 1 is the highest priority. Within a level, requests leave in enqueue order;
// each level keeps two deques (live, then timed-out-and-delayed), so equal priorities are never
// compared and ties cannot fail (the predecessor's heap raised on ties).
//
// Dispatch rule at time `now` (evaluated by try_form_batch / next_batch):
//   1. Timed-out requests are swept first: REJECT completes them with a kCancelled
//      "batcher: timed out" status (never batched); DELAY moves them behind the live requests
//      of their level.
//   2. The candidate batch is the longest prefix of the priority-then-FIFO order with at most
//      max_batch_size requests and at most max_batch_bytes bytes (requests are never skipped,
//      so order is preserved; a batch only grows).
//   3. It is dispatched whole when it is full (size or bytes), when the batcher is closed
//      (draining), or when its oldest request has waited max_queue_delay_us. Otherwise, if a
//      preferred size fits, the largest preferred size <= candidate is dispatched at once.
//      Otherwise the batcher waits for more requests or for the delay to elapse.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/status.h"
#include "pipeline/clock.h"

namespace kiln {

enum class TimeoutAction : uint8_t {
  kReject = 0,  // complete with kCancelled "batcher: timed out", never batch
  kDelay,       // keep, but order after the non-timed-out requests of the same level
};

const char* timeout_action_name(TimeoutAction action);

struct BatcherConfig {
  int32_t max_batch_size = 8;
  // Ascending, each in [1, max_batch_size]; unsorted or duplicated input is normalized.
  std::vector<int32_t> preferred_batch_sizes;
  // Dispatch a smaller batch once its oldest request has waited this long; 0 = at once.
  int64_t max_queue_delay_us = 0;
  // Levels 1..priority_levels, 1 highest. enqueue(priority 0) means default_priority_level.
  int32_t priority_levels = 1;
  int32_t default_priority_level = 1;
  TimeoutAction timeout_action = TimeoutAction::kReject;
  // Applied when a request passes timeout_us 0; 0 = no timeout.
  int64_t default_timeout_us = 0;
  // As in Triton, a request may only lower a non-zero default timeout.
  bool allow_timeout_override = true;
  // Pending requests (live + delayed) beyond this are rejected at enqueue; 0 = unbounded.
  size_t max_queue_size = 0;
  // Sum of request bytes in one batch; 0 = unbounded. A request larger than this is rejected.
  size_t max_batch_bytes = 0;
};

// Checks ranges; sorts and deduplicates preferred_batch_sizes in place.
Status batcher_config_normalize(BatcherConfig* config);

// Completion of one request: dispatched-and-completed (status Ok or the status passed to
// complete()), or rejected after a queue timeout (kCancelled).
struct BatchResponse {
  uint64_t id = 0;  // assigned at enqueue, increasing
  Status status;
  int32_t priority = 0;    // resolved level
  int64_t queue_ns = 0;    // enqueue -> dispatch (or -> rejection)
  int32_t batch_size = 0;  // 0 when never batched
  int64_t compute_ns = 0;  // reported by the consumer through complete()
  bool delayed = false;    // timed out under kDelay before being batched
};

template <typename Request>
struct BatchItem {
  Request request;
  uint64_t id = 0;
  int32_t priority = 0;
  size_t bytes = 0;
  int64_t enqueue_ns = 0;
  int64_t queue_ns = 0;  // time spent queued, set at dispatch
  bool delayed = false;
};

template <typename Request>
struct Batch {
  std::vector<BatchItem<Request>> items;  // priority-then-FIFO order
  uint64_t sequence = 0;                  // dispatch counter, from 1
  int64_t dispatch_ns = 0;
  size_t bytes = 0;

  size_t size() const { return items.size(); }
  bool empty() const { return items.empty(); }
};

struct BatcherStats {
  uint64_t enqueued = 0;            // accepted by enqueue
  uint64_t rejected_full = 0;       // enqueue refused: queue full
  uint64_t rejected_closed = 0;     // enqueue refused: closed
  uint64_t timed_out_rejected = 0;  // completed with the timeout status
  uint64_t timed_out_delayed = 0;   // moved behind their level (kDelay)
  uint64_t batches = 0;
  uint64_t batched_requests = 0;
  uint64_t completed_requests = 0;
  int64_t total_queue_ns = 0;    // over batched requests
  int64_t total_compute_ns = 0;  // over completed batches
  size_t pending = 0;
  double average_batch_size() const {
    return batches == 0 ? 0.0 : static_cast<double>(batched_requests) / static_cast<double>(batches);
  }
};

namespace detail {
Status batcher_queue_full(size_t max_queue_size);
Status batcher_closed();
Status batcher_timed_out(int64_t waited_ns);
}  // namespace detail

template <typename Request>
class DynamicBatcher {
 public:
  // Called for every completed request: from complete() (in batch order) and for timeouts
  // rejected under kReject (from whichever call swept them, never under the internal lock).
  using CompletionFn = std::function<void(Request& request, const BatchResponse& response)>;

  static Result<std::unique_ptr<DynamicBatcher>> create(BatcherConfig config, const Clock* clock = nullptr,
                                                        CompletionFn on_complete = {}) {
    KILN_TRY(batcher_config_normalize(&config));
    if (clock == nullptr) clock = &SteadyClock::instance();
    return std::unique_ptr<DynamicBatcher>(new DynamicBatcher(std::move(config), clock, std::move(on_complete)));
  }

  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  // priority: 0 = default level, else 1..priority_levels. timeout_us: 0 = the config default.
  // Never blocks: a full queue or a closed batcher is answered at once.
  Status enqueue(Request request, int32_t priority = 0, int64_t timeout_us = 0, size_t bytes = 0) {
    if (priority < 0 || priority > m_config.priority_levels) {
      return invalid_argument("batcher: priority " + std::to_string(priority) + " outside 0.." +
                              std::to_string(m_config.priority_levels));
    }
    if (timeout_us < 0) return invalid_argument("batcher: negative timeout_us");
    if (m_config.max_batch_bytes != 0 && bytes > m_config.max_batch_bytes) {
      return invalid_argument("batcher: request of " + std::to_string(bytes) + " bytes exceeds max_batch_bytes " +
                              std::to_string(m_config.max_batch_bytes));
    }
    const int32_t level = priority == 0 ? m_config.default_priority_level : priority;
    const int64_t effective_timeout_us = resolve_timeout_us(timeout_us);
    std::vector<Rejected> rejected;
    Status status;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      const int64_t now = m_clock->now();
      if (m_closed) {
        ++m_stats.rejected_closed;
        return detail::batcher_closed();
      }
      if (m_config.max_queue_size != 0 && m_pending >= m_config.max_queue_size && now >= m_next_expiry_ns) {
        sweep_locked(now, &rejected);  // expired requests free their slots first
      }
      if (m_config.max_queue_size != 0 && m_pending >= m_config.max_queue_size) {
        ++m_stats.rejected_full;
        status = detail::batcher_queue_full(m_config.max_queue_size);
      } else {
        const int64_t deadline_ns =
            effective_timeout_us == 0 ? kNever : saturating_add(now, us_to_ns(effective_timeout_us));
        Pending entry{std::move(request), m_next_id++, level, bytes, now, deadline_ns, false};
        m_next_expiry_ns = std::min(m_next_expiry_ns, entry.deadline_ns);
        m_levels[static_cast<size_t>(level - 1)].live.push_back(std::move(entry));
        ++m_pending;
        ++m_stats.enqueued;
      }
    }
    if (status.is_ok()) m_cv.notify_one();
    deliver_rejected(&rejected);
    return status;
  }

  // Non-blocking: the batch the dispatch rule allows at the clock's current time, if any.
  std::optional<Batch<Request>> try_form_batch() {
    std::vector<Rejected> rejected;
    std::optional<Batch<Request>> batch;
    bool more = false;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      int64_t wake_ns = kNever;
      batch = form_locked(m_clock->now(), &rejected, &wake_ns);
      more = batch.has_value() && m_pending > 0;
    }
    if (more) m_cv.notify_one();
    deliver_rejected(&rejected);
    return batch;
  }

  // Blocks until a batch is ready, the clock reaches deadline_ns, or the batcher is closed and
  // drained. Ok + non-empty batch; Ok + empty batch when the deadline passed first;
  // kCancelled "batcher: closed" once closed and empty.
  Result<Batch<Request>> next_batch(int64_t deadline_ns = kNever) {
    std::vector<Rejected> rejected;
    std::optional<Batch<Request>> batch;
    bool closed_and_empty = false;
    bool more = false;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      for (;;) {
        const int64_t now = m_clock->now();
        int64_t wake_ns = kNever;
        batch = form_locked(now, &rejected, &wake_ns);
        if (batch.has_value()) {
          more = m_pending > 0;
          break;
        }
        if (m_closed && m_pending == 0) {
          closed_and_empty = true;
          break;
        }
        if (now >= deadline_ns) break;
        if (!rejected.empty()) break;  // deliver outside the lock, then come back
        const int64_t until_ns = std::min(wake_ns, deadline_ns);
        int64_t wait_ns = std::min(until_ns - now, kIdleWaitNs);
        if (!m_clock->is_real_time()) wait_ns = std::min(wait_ns, kManualClockPollNs);
        m_cv.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(wait_ns, 1)));
      }
    }
    if (more) m_cv.notify_one();
    const bool retry = !batch.has_value() && !closed_and_empty && !rejected.empty();
    deliver_rejected(&rejected);
    if (retry) return next_batch(deadline_ns);
    if (batch.has_value()) return std::move(*batch);
    if (closed_and_empty) return detail::batcher_closed();
    return Batch<Request>{};
  }

  // The consumer reports the batch's compute time; every item gets a response (status Ok
  // unless `status` says otherwise) and the completion callback runs for each.
  std::vector<BatchResponse> complete(Batch<Request>& batch, int64_t compute_ns, const Status& status = Status()) {
    std::vector<BatchResponse> responses;
    responses.reserve(batch.size());
    const int32_t size = static_cast<int32_t>(batch.size());
    for (auto& item : batch.items) {
      BatchResponse response;
      response.id = item.id;
      response.status = status;
      response.priority = item.priority;
      response.queue_ns = item.queue_ns;
      response.batch_size = size;
      response.compute_ns = compute_ns;
      response.delayed = item.delayed;
      if (m_on_complete) m_on_complete(item.request, response);
      responses.push_back(std::move(response));
    }
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stats.completed_requests += batch.size();
      m_stats.total_compute_ns += compute_ns;
    }
    return responses;
  }

  // Stops intake (enqueue answers kCancelled "batcher: closed"), wakes every waiter; requests
  // already queued still drain, now without waiting for the queue delay.
  void close() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_closed = true;
    }
    m_cv.notify_all();
  }

  bool closed() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_closed;
  }
  size_t pending() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_pending;
  }
  BatcherStats stats() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    BatcherStats stats = m_stats;
    stats.pending = m_pending;
    return stats;
  }
  const BatcherConfig& config() const { return m_config; }

  // Batches formed from now on hold at most `size` requests (clamped to 1 .. config().max_batch_size): what an
  // adaptive batch sizer, or a consumer that ran out of memory, moves. Preferred sizes above it are skipped.
  void batch_limit_set(int32_t size) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_batch_limit = std::clamp(size, 1, m_config.max_batch_size);
    }
    m_cv.notify_all();
  }
  int32_t batch_limit() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_batch_limit;
  }

  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

 private:
  // An idle consumer re-checks now and then even without notifications (cheap safety net).
  static constexpr int64_t kIdleWaitNs = 100'000'000;
  // With a manual clock, time moves without notifications: poll.
  static constexpr int64_t kManualClockPollNs = 1'000'000;

  struct Pending {
    Request request;
    uint64_t id;
    int32_t priority;
    size_t bytes;
    int64_t enqueue_ns;
    int64_t deadline_ns;
    bool delayed;
  };
  struct Level {
    std::deque<Pending> live;     // FIFO
    std::deque<Pending> delayed;  // FIFO by time-out order, after `live`
  };
  struct Rejected {
    Pending entry;
    int64_t waited_ns;
  };

  DynamicBatcher(BatcherConfig config, const Clock* clock, CompletionFn on_complete)
      : m_config(std::move(config)),
        m_clock(clock),
        m_on_complete(std::move(on_complete)),
        m_levels(static_cast<size_t>(m_config.priority_levels)) {}

  static int64_t us_to_ns(int64_t us) { return us > kNever / 1000 ? kNever : us * 1000; }
  static int64_t saturating_add(int64_t a, int64_t b) { return b > 0 && a > kNever - b ? kNever : a + b; }

  int64_t resolve_timeout_us(int64_t requested_us) const {
    const int64_t fallback = m_config.default_timeout_us;
    if (requested_us == 0) return fallback;
    if (fallback == 0) return requested_us;
    return m_config.allow_timeout_override ? std::min(requested_us, fallback) : fallback;
  }

  // Removes (kReject) or demotes (kDelay) every live request whose deadline passed. O(pending),
  // and runs only once the earliest deadline has passed.
  void sweep_locked(int64_t now, std::vector<Rejected>* rejected) {
    int64_t next_expiry = kNever;
    for (Level& level : m_levels) {
      std::deque<Pending> kept;
      bool any_expired = false;
      for (Pending& entry : level.live) {
        if (entry.deadline_ns <= now) {
          any_expired = true;
          break;
        }
      }
      if (!any_expired) {
        for (const Pending& entry : level.live) next_expiry = std::min(next_expiry, entry.deadline_ns);
        continue;
      }
      for (Pending& entry : level.live) {
        if (entry.deadline_ns > now) {
          next_expiry = std::min(next_expiry, entry.deadline_ns);
          kept.push_back(std::move(entry));
        } else if (m_config.timeout_action == TimeoutAction::kDelay) {
          entry.delayed = true;
          entry.deadline_ns = kNever;
          ++m_stats.timed_out_delayed;
          level.delayed.push_back(std::move(entry));
        } else {
          const int64_t waited = now - entry.enqueue_ns;
          ++m_stats.timed_out_rejected;
          --m_pending;
          rejected->push_back(Rejected{std::move(entry), waited});
        }
      }
      level.live.swap(kept);
    }
    m_next_expiry_ns = next_expiry;
  }

  std::optional<Batch<Request>> form_locked(int64_t now, std::vector<Rejected>* rejected, int64_t* wake_ns) {
    if (now >= m_next_expiry_ns) sweep_locked(now, rejected);
    *wake_ns = m_next_expiry_ns;
    if (m_pending == 0) return std::nullopt;

    // Scan the priority-then-FIFO order for the longest prefix that fits.
    const size_t max_size = static_cast<size_t>(m_batch_limit);
    size_t count = 0;
    size_t bytes = 0;
    bool byte_limited = false;
    int64_t oldest_ns = kNever;
    for (const Level& level : m_levels) {
      for (const std::deque<Pending>* queue : {&level.live, &level.delayed}) {
        for (const Pending& entry : *queue) {
          if (count == max_size) break;
          if (m_config.max_batch_bytes != 0 && bytes + entry.bytes > m_config.max_batch_bytes) {
            byte_limited = true;
            break;
          }
          ++count;
          bytes += entry.bytes;
          oldest_ns = std::min(oldest_ns, entry.enqueue_ns);
        }
        if (count == max_size || byte_limited) break;
      }
      if (count == max_size || byte_limited) break;
    }

    size_t take = 0;
    const int64_t delay_ns = us_to_ns(m_config.max_queue_delay_us);
    if (count == max_size || byte_limited || m_closed || now - oldest_ns >= delay_ns) {
      take = count;
    } else {
      for (auto it = m_config.preferred_batch_sizes.rbegin(); it != m_config.preferred_batch_sizes.rend(); ++it) {
        if (static_cast<size_t>(*it) <= count) {
          take = static_cast<size_t>(*it);
          break;
        }
      }
    }
    if (take == 0) {
      *wake_ns = std::min(*wake_ns, saturating_add(oldest_ns, delay_ns));
      return std::nullopt;
    }

    Batch<Request> batch;
    batch.items.reserve(take);
    batch.dispatch_ns = now;
    for (Level& level : m_levels) {
      for (std::deque<Pending>* queue : {&level.live, &level.delayed}) {
        while (batch.items.size() < take && !queue->empty()) {
          Pending& entry = queue->front();
          batch.bytes += entry.bytes;
          batch.items.push_back(BatchItem<Request>{std::move(entry.request), entry.id, entry.priority, entry.bytes,
                                                   entry.enqueue_ns, now - entry.enqueue_ns, entry.delayed});
          m_stats.total_queue_ns += now - entry.enqueue_ns;
          queue->pop_front();
        }
      }
    }
    m_pending -= take;
    batch.sequence = ++m_stats.batches;
    m_stats.batched_requests += take;
    return batch;
  }

  void deliver_rejected(std::vector<Rejected>* rejected) {
    for (Rejected& r : *rejected) {
      if (!m_on_complete) continue;
      BatchResponse response;
      response.id = r.entry.id;
      response.status = detail::batcher_timed_out(r.waited_ns);
      response.priority = r.entry.priority;
      response.queue_ns = r.waited_ns;
      m_on_complete(r.entry.request, response);
    }
    rejected->clear();
  }

  const BatcherConfig m_config;
  const Clock* m_clock;
  const CompletionFn m_on_complete;

  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::vector<Level> m_levels;  // index = level - 1
  size_t m_pending = 0;
  uint64_t m_next_id = 1;
  int64_t m_next_expiry_ns = kNever;  // earliest live deadline (exact after a sweep, a lower bound otherwise)
  bool m_closed = false;
  int32_t m_batch_limit = m_config.max_batch_size;
  BatcherStats m_stats;
};

}  // namespace kiln
