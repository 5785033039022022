// Non-template parts of the dynamic batcher: config checks and the status messages.
#include "pipeline/batcher.h"

#include <algorithm>
#include <string>

namespace kiln {

const char* timeout_action_name(TimeoutAction action) {
  switch (action) {
    case TimeoutAction::kReject:
      return "REJECT";
    case TimeoutAction::kDelay:
      return "DELAY";
  }
  return "unknown";
}

Status batcher_config_normalize(BatcherConfig* config) {
  if (config == nullptr) return invalid_argument("batcher: null config");
  if (config->max_batch_size < 1) {
    return invalid_argument("batcher: max_batch_size must be >= 1, got " + std::to_string(config->max_batch_size));
  }
  if (config->priority_levels < 1) {
    return invalid_argument("batcher: priority_levels must be >= 1, got " + std::to_string(config->priority_levels));
  }
  if (config->default_priority_level < 1 || config->default_priority_level > config->priority_levels) {
    return invalid_argument("batcher: default_priority_level " + std::to_string(config->default_priority_level) +
                            " outside 1.." + std::to_string(config->priority_levels));
  }
  if (config->max_queue_delay_us < 0) return invalid_argument("batcher: negative max_queue_delay_us");
  if (config->default_timeout_us < 0) return invalid_argument("batcher: negative default_timeout_us");
  auto& sizes = config->preferred_batch_sizes;
  for (int32_t size : sizes) {
    if (size < 1 || size > config->max_batch_size) {
      return invalid_argument("batcher: preferred batch size " + std::to_string(size) + " outside 1.." +
                              std::to_string(config->max_batch_size));
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return Status::ok();
}

namespace detail {

Status batcher_queue_full(size_t max_queue_size) {
  return {Errc::kCancelled,
          "batcher: queue full (max_queue_size " + std::to_string(max_queue_size) + "), request rejected"};
}

Status batcher_closed() { return {Errc::kCancelled, "batcher: closed"}; }

Status batcher_timed_out(int64_t waited_ns) {
  return {Errc::kCancelled, "batcher: timed out in queue after " + std::to_string(waited_ns / 1000) + " us"};
}

}  // namespace detail
}  // namespace kiln
