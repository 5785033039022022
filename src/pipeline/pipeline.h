// Asynchronous multi-stage pipeline: source -> stage 1 -> ... -> stage N -> sink, every link a bounded
// queue (backpressure), every stage with its own CPU worker threads (DALI's pipelined executor with
// bounded prefetch, cpu-only).
//
//   Pipeline<Sample> p;
//   KILN_TRY(p.add_stage({"decode", 4, 8}, [](Sample& s) { return decode(s); }));
//   KILN_TRY(p.add_stage({"encode", 2, 8}, [](Sample& s) { return encode(s); }));
//   Status st = p.run(next_sample, write_sample, {.ordered = true, .on_error = ErrorPolicy::kSkip,
//                                                 .quarantine_path = "quarantine.jsonl"});
//   std::puts(pipeline_stats_table(p.stats()).c_str());
//
// Threads: the source runs on its own thread; each stage on `workers` threads; the sink on the thread
// that called run(). Sample ids are assigned in source order, from 0.
//
// Ordering: with `ordered`, the sink sees samples in id order. A reorder buffer holds early arrivals;
// the source may run at most in_flight_limit() samples ahead of the sink, so memory stays flat.
//
// Errors (per sample, from a stage function):
//   kSkip: the sample is dropped, counted in the stage's `errors` and written to the quarantine report.
//   kFail: the pipeline drains and run() returns the error of the lowest failing sample id. The source
//          stops; samples with a higher id are discarded before their next stage starts; samples with a
//          lower id finish and reach the sink. Ordered, the sink therefore receives exactly the samples
//          before the first failing one, as a serial run would. What the sink received stays.
// A sink error always fails the run, whatever the policy; the sink is not called again.
//
// cancel() (any thread) stops the run: queues are cancelled, waiting threads wake, calls already inside
// a stage function or the source finish, nothing new starts; run() returns kCancelled. A cancel() while
// no run is active applies to the next run.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/status.h"
#include "pipeline/bounded_queue.h"
#include "pipeline/pipeline_stats.h"
#include "profiler/profiler.h"

namespace kiln {

enum class ErrorPolicy : uint8_t { kSkip, kFail };

struct StageOptions {
  std::string name;
  int32_t workers = 1;        // CPU threads running this stage
  size_t queue_capacity = 4;  // the stage's input queue (its prefetch depth)
};

struct RunOptions {
  bool ordered = true;
  ErrorPolicy on_error = ErrorPolicy::kFail;
  std::string quarantine_path;     // kSkip: JSON lines {"id","stage","error"}; empty keeps it in memory only
  size_t sink_queue_capacity = 4;  // queue between the last stage and the sink
};

template <typename T>
class Pipeline {
 public:
  using StageFn = std::function<Status(T&)>;
  using SourceFn = std::function<std::optional<T>()>;  // std::nullopt ends the stream
  using SinkFn = std::function<Status(T&&)>;

  Pipeline() = default;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  Status add_stage(StageOptions options, StageFn fn) {
    if (options.name.empty()) return invalid_argument("pipeline stage needs a name");
    if (options.workers < 1) return invalid_argument("pipeline stage '" + options.name + "': workers must be >= 1");
    if (!fn) return invalid_argument("pipeline stage '" + options.name + "': no function");
    std::lock_guard<std::mutex> lock(m_run_mutex);
    if (m_running) return invalid_argument("pipeline stage '" + options.name + "': cannot add a stage while running");
    if (options.queue_capacity < 1) options.queue_capacity = 1;
    m_stages.push_back(Stage{std::move(options), std::move(fn)});
    return Status::ok();
  }

  size_t stage_count() const { return m_stages.size(); }

  // Most samples between the source and the sink at once: every queue full, every worker busy, one
  // in the source's hand and one in the sink's. The ordered reorder window is the same number.
  int64_t in_flight_limit(const RunOptions& options) const {
    int64_t limit = static_cast<int64_t>(std::max<size_t>(1, options.sink_queue_capacity)) + 2;
    for (const Stage& s : m_stages) limit += static_cast<int64_t>(s.options.queue_capacity) + s.options.workers;
    return limit;
  }

  // Runs to the end of the source, a failure or a cancel. Not reentrant.
  Status run(const SourceFn& source, const SinkFn& sink, const RunOptions& options = {}) {
    if (!source || !sink) return invalid_argument("pipeline run needs a source and a sink");
    {
      std::lock_guard<std::mutex> lock(m_run_mutex);
      if (m_running) return invalid_argument("pipeline is already running");
      m_running = true;
    }
    m_stats.reset();
    m_quarantine.reset();
    if (Status st = m_quarantine.open(options.on_error == ErrorPolicy::kSkip ? options.quarantine_path : std::string());
        !st.is_ok()) {
      std::lock_guard<std::mutex> lock(m_run_mutex);
      m_running = false;
      return st;
    }

    RunState rs(options, in_flight_limit(options));
    for (const Stage& s : m_stages) {
      rs.queues.push_back(std::make_unique<Queue>(s.options.queue_capacity));
      rs.queues.back()->set_depth_counter(profile_intern("queue: " + s.options.name));
    }
    rs.queues.push_back(std::make_unique<Queue>(std::max<size_t>(1, options.sink_queue_capacity)));
    rs.queues.back()->set_depth_counter(profile_intern("queue: sink"));
    rs.live = std::make_unique<std::atomic<int32_t>[]>(m_stages.size() + 1);
    std::vector<std::vector<StageStats>> tallies(m_stages.size());
    for (size_t s = 0; s < m_stages.size(); ++s) {
      rs.live[s].store(m_stages[s].options.workers);
      tallies[s].resize(static_cast<size_t>(m_stages[s].options.workers));
    }
    {
      std::lock_guard<std::mutex> lock(m_run_mutex);
      m_state = &rs;
      if (m_cancel_requested) rs.cancel_all();
    }

    const auto started = Clock::now();
    StageStats source_stats = make_row("source", StageKind::kSource, 1);
    StageStats sink_stats = make_row("sink", StageKind::kSink, 1);
    std::vector<std::thread> threads;
    threads.emplace_back([&] { source_loop(rs, source, source_stats); });
    for (size_t s = 0; s < m_stages.size(); ++s) {
      for (auto& tally : tallies[s]) threads.emplace_back([&, s] { worker_loop(rs, s, tally); });
    }
    sink_loop(rs, sink, sink_stats);
    for (std::thread& t : threads) t.join();
    const int64_t wall_ns = elapsed_ns(started);

    {
      std::lock_guard<std::mutex> lock(m_run_mutex);
      m_state = nullptr;
      m_running = false;
      m_cancel_requested = false;
    }
    m_quarantine.close();

    // Stats: source, stages (per-worker tallies merged), sink.
    m_stats.wall_ns = wall_ns;
    m_stats.max_reorder = rs.max_reorder;
    m_stats.produced = source_stats.items;
    m_stats.delivered = sink_stats.items;
    m_stats.stages.push_back(std::move(source_stats));
    for (size_t s = 0; s < m_stages.size(); ++s) {
      StageStats row = make_row(m_stages[s].options.name, StageKind::kStage, m_stages[s].options.workers);
      for (const StageStats& t : tallies[s]) {
        row.items += t.items;
        row.errors += t.errors;
        row.discarded += t.discarded;
        row.busy_ns += t.busy_ns;
        row.wait_input_ns += t.wait_input_ns;
        row.wait_output_ns += t.wait_output_ns;
        row.latency.merge(t.latency);
      }
      fill_queue(row, *rs.queues[s]);
      if (options.on_error == ErrorPolicy::kSkip) m_stats.quarantined += row.errors;
      m_stats.stages.push_back(std::move(row));
    }
    fill_queue(sink_stats, *rs.queues.back());
    m_stats.end_to_end = std::move(rs.end_to_end);
    m_stats.stages.push_back(std::move(sink_stats));

    if (rs.cancelled.load()) return Status(Errc::kCancelled, "pipeline cancelled");
    std::lock_guard<std::mutex> lock(rs.error_mutex);
    return rs.error;
  }

  // Stops the active run (or the next one, if none is active). Safe from any thread.
  void cancel() {
    std::lock_guard<std::mutex> lock(m_run_mutex);
    m_cancel_requested = true;
    if (m_state) m_state->cancel_all();
  }

  // Of the last run (valid after run() returns).
  const PipelineStats& stats() const { return m_stats; }
  std::vector<QuarantineEntry> quarantined() const { return m_quarantine.entries(); }

  // Drops the stages, the last run's results and a pending cancel. Not while running.
  void reset() {
    std::lock_guard<std::mutex> lock(m_run_mutex);
    if (m_running) return;
    m_stages.clear();
    m_stats.reset();
    m_quarantine.reset();
    m_cancel_requested = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr int64_t kNoFailure = std::numeric_limits<int64_t>::max();

  struct Stage {
    StageOptions options;
    StageFn fn;
  };

  // A sample on its way; no value = skipped (kept only so the ordered sink can move past its id).
  struct Envelope {
    int64_t id = 0;
    std::optional<T> value;
    Clock::time_point born;
  };
  using Queue = BoundedQueue<Envelope>;

  struct RunState {
    RunState(const RunOptions& o, int64_t w) : options(o), window(w) {}

    const RunOptions& options;
    const int64_t window;
    std::vector<std::unique_ptr<Queue>> queues;  // queues[s] feeds stage s; the last feeds the sink
    std::unique_ptr<std::atomic<int32_t>[]> live;  // workers still running, per stage
    std::atomic<bool> cancelled{false};
    std::atomic<int64_t> fail_id{kNoFailure};  // lowest failing sample id so far

    std::mutex error_mutex;
    Status error;
    int64_t error_id = kNoFailure;

    // Ordered mode: the source may start sample `id` only while id < next_delivered + window.
    std::mutex window_mutex;
    std::condition_variable window_cv;
    int64_t next_delivered = 0;
    bool source_waiting = false;

    int64_t max_reorder = 0;      // sink thread only
    LatencySamples end_to_end;    // sink thread only

    bool stopping() const { return cancelled.load(std::memory_order_relaxed) || fail_id.load() != kNoFailure; }

    void wake_source() {
      { std::lock_guard<std::mutex> lock(window_mutex); }
      window_cv.notify_all();
    }

    void cancel_all() {
      cancelled.store(true);
      for (auto& q : queues) q->cancel();
      wake_source();
    }

    void fail(int64_t id, const std::string& where, const Status& status) {
      {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (id < error_id) {
          error_id = id;
          error = Status(status.code(), where + ", sample " + std::to_string(id) + ": " + status.message());
        }
      }
      int64_t current = fail_id.load();
      while (id < current && !fail_id.compare_exchange_weak(current, id)) {
      }
      wake_source();
    }
  };

  static int64_t elapsed_ns(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  }

  static StageStats make_row(std::string name, StageKind kind, int32_t workers) {
    StageStats row;
    row.name = std::move(name);
    row.kind = kind;
    row.workers = workers;
    return row;
  }

  static void fill_queue(StageStats& row, const Queue& queue) {
    const BoundedQueueStats q = queue.stats();
    row.queue_capacity = q.capacity;
    row.queue_high_water = q.high_water;
  }

  void source_loop(RunState& rs, const SourceFn& source, StageStats& st) {
    Profiler::instance().set_thread_name("source");
    Queue& out = *rs.queues.front();
    for (int64_t id = 0;; ++id) {
      if (rs.stopping()) break;
      if (rs.options.ordered) {
        std::unique_lock<std::mutex> lock(rs.window_mutex);
        if (id >= rs.next_delivered + rs.window) {
          const auto wait_start = Clock::now();
          rs.source_waiting = true;
          rs.window_cv.wait(lock, [&] { return rs.stopping() || id < rs.next_delivered + rs.window; });
          rs.source_waiting = false;
          st.wait_input_ns += elapsed_ns(wait_start);
        }
        if (rs.stopping()) break;
      }
      const auto t0 = Clock::now();
      std::optional<T> value = source();
      const auto t1 = Clock::now();
      const int64_t busy = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
      st.busy_ns += busy;
      if (!value) break;
      st.latency.add(busy);
      ++st.items;
      int64_t waited = 0;
      const bool pushed = out.push(Envelope{id, std::move(value), t1}, &waited);
      st.wait_output_ns += waited;
      if (!pushed) break;
    }
    out.close();
  }

  void worker_loop(RunState& rs, size_t s, StageStats& st) {
    const Stage& stage = m_stages[s];
    Profiler::instance().set_thread_name(stage.options.name);  // stage workers are named in traces
    Queue& in = *rs.queues[s];
    Queue& out = *rs.queues[s + 1];
    const bool ordered = rs.options.ordered;
    Envelope env;
    for (;;) {
      int64_t waited = 0;
      const bool popped = in.pop(&env, &waited);
      st.wait_input_ns += waited;
      if (!popped) break;
      if (env.value) {
        // A failure at a lower id: this sample would not be reached in a serial run.
        if (env.id > rs.fail_id.load(std::memory_order_relaxed)) {
          ++st.discarded;
          continue;
        }
        // Profiler: a stage-level range (name = stage.options.name, sample = env.id) goes around this call.
        const auto t0 = Clock::now();
        Status status = stage.fn(*env.value);
        const int64_t busy = elapsed_ns(t0);
        st.busy_ns += busy;
        st.latency.add(busy);
        if (status.is_ok()) {
          ++st.items;
        } else {
          ++st.errors;
          if (rs.options.on_error == ErrorPolicy::kFail) {
            rs.fail(env.id, "stage '" + stage.options.name + "'", status);
            continue;
          }
          m_quarantine.add(QuarantineEntry{env.id, stage.options.name, status.to_string()});
          env.value.reset();
        }
      }
      if (!env.value && !ordered) continue;  // skipped: only the ordered sink needs to see the id
      const bool pushed = out.push(std::move(env), &waited);
      st.wait_output_ns += waited;
      if (!pushed) break;
    }
    if (rs.live[s].fetch_sub(1) == 1) out.close();
  }

  void sink_loop(RunState& rs, const SinkFn& sink, StageStats& st) {
    Queue& in = *rs.queues.back();
    const bool ordered = rs.options.ordered;
    bool sink_failed = false;
    auto deliver = [&](Envelope& e) {
      if (!e.value) return;  // skipped (quarantined) sample
      if (sink_failed || rs.cancelled.load(std::memory_order_relaxed) ||
          e.id > rs.fail_id.load(std::memory_order_relaxed)) {
        ++st.discarded;
        return;
      }
      // Profiler: the sink's range goes around this call.
      const auto t0 = Clock::now();
      Status status = sink(std::move(*e.value));
      const auto t1 = Clock::now();
      const int64_t busy = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
      st.busy_ns += busy;
      st.latency.add(busy);
      if (!status.is_ok()) {
        ++st.errors;
        sink_failed = true;
        rs.fail(e.id, "sink", status);
        return;
      }
      ++st.items;
      rs.end_to_end.add(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - e.born).count());
    };

    std::map<int64_t, Envelope> reorder;
    int64_t next = 0;
    Envelope env;
    for (;;) {
      int64_t waited = 0;
      const bool popped = in.pop(&env, &waited);
      st.wait_input_ns += waited;
      if (!popped) break;
      if (!ordered) {
        deliver(env);
        continue;
      }
      reorder.emplace(env.id, std::move(env));
      rs.max_reorder = std::max<int64_t>(rs.max_reorder, static_cast<int64_t>(reorder.size()));
      bool advanced = false;
      while (!reorder.empty() && reorder.begin()->first == next) {
        deliver(reorder.begin()->second);
        reorder.erase(reorder.begin());
        ++next;
        advanced = true;
      }
      if (advanced) {
        bool wake = false;
        {
          std::lock_guard<std::mutex> lock(rs.window_mutex);
          rs.next_delivered = next;
          wake = rs.source_waiting;
        }
        if (wake) rs.window_cv.notify_one();
      }
    }
    for (auto& [id, e] : reorder) {
      if (e.value) ++st.discarded;
    }
  }

  std::vector<Stage> m_stages;
  PipelineStats m_stats;
  QuarantineReport m_quarantine;
  mutable std::mutex m_run_mutex;
  RunState* m_state = nullptr;  // the active run, for cancel()
  bool m_running = false;
  bool m_cancel_requested = false;
};

}  // namespace kiln
