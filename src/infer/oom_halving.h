// Batches on a device that may run out of memory: a batch that does is run in halves (each half again if it does
// too), and from then on a batch larger than what fitted is split at once instead of tried whole. Used by both of
// InferSession's runs (copied and bound outputs). Runs may call run() at once: the limit only ever comes down.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kiln/infer.h"

namespace kiln {

class OomHalving {
 public:
  // One run of a whole batch.
  template <typename Out>
  using Attempt = std::function<Status(std::span<const float>, const std::vector<int64_t>&, std::vector<Out>*)>;
  // The outputs of two halves (of a and b items), one after the other.
  template <typename Out>
  using Join = std::function<Status(const std::vector<Out>& a, int64_t a_items, const std::vector<Out>& b,
                                    int64_t b_items, std::vector<Out>*)>;
  // A batch ran out of memory: from now on at most `limit` items are tried whole.
  using Halved = std::function<void(int64_t limit)>;

  // The largest batch that fitted after one ran out of memory (shared by every kind of output); 0 = none has.
  int64_t limit() const { return m_limit.load(); }
  void reset() { m_limit.store(0); }

  template <typename Out>
  Status run(std::span<const float> input, const std::vector<int64_t>& shape, std::vector<Out>* outputs,
             const Attempt<Out>& attempt, const Join<Out>& join, const Halved& halved) {
    const int64_t limit = m_limit.load();
    if (limit > 0 && shape[0] > limit) return halves(input, shape, outputs, attempt, join, halved);
    Status st = attempt(input, shape, outputs);
    if (st.code() != Errc::kOutOfMemory || shape[0] <= 1) return st;
    const int64_t larger_half = shape[0] - shape[0] / 2;
    int64_t was = m_limit.load();
    while ((was == 0 || larger_half < was) && !m_limit.compare_exchange_weak(was, larger_half)) {
    }
    if (was == 0 || larger_half < was) halved(larger_half);
    return halves(input, shape, outputs, attempt, join, halved);
  }

 private:
  template <typename Out>
  Status halves(std::span<const float> input, const std::vector<int64_t>& shape, std::vector<Out>* outputs,
                const Attempt<Out>& attempt, const Join<Out>& join, const Halved& halved) {
    const int64_t n = shape[0], first = n / 2;
    const size_t per_item = input.size() / static_cast<size_t>(n);
    std::vector<int64_t> first_shape = shape, second_shape = shape;
    first_shape[0] = first;
    second_shape[0] = n - first;
    std::vector<Out> a, b;
    KILN_TRY(run(input.first(static_cast<size_t>(first) * per_item), first_shape, &a, attempt, join, halved));
    KILN_TRY(run(input.subspan(static_cast<size_t>(first) * per_item), second_shape, &b, attempt, join, halved));
    return join(a, first, b, n - first, outputs);
  }

  std::atomic<int64_t> m_limit{0};
};

// True when outputs of two halves of a, b items (shapes sa, sb) have one row per item: they can be joined.
inline bool halves_joinable(const std::vector<int64_t>& sa, int64_t a, const std::vector<int64_t>& sb, int64_t b) {
  return !sa.empty() && !sb.empty() && sa[0] == a && sb[0] == b &&
         std::equal(sa.begin() + 1, sa.end(), sb.begin() + 1, sb.end());
}

// join for copied outputs: each output's rows of the first half, then the second's; UnsupportedFormat naming
// `label` for an output without one row per item.
Status tensors_join(const std::vector<Tensor>& first, int64_t first_items, const std::vector<Tensor>& second,
                    int64_t second_items, const std::string& label, std::vector<Tensor>* outputs);

}  // namespace kiln
