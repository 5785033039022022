// The config file's targets checked against a segment run's summary.
#include <cstdio>
#include <vector>

#include "apps/segment/segment_run.h"

namespace kiln {

std::vector<SegmentTargetCheck> segment_targets_check(const SegmentTargets& t, const SegmentJobSummary& s) {
  std::vector<SegmentTargetCheck> checks;
  char text[160];
  if (t.max_end_to_end_ms > 0) {
    std::snprintf(text, sizeof(text), "p99 %.1f ms %s %.0f ms", s.latency_p99_ms,
                  s.latency_p99_ms <= t.max_end_to_end_ms ? "<=" : ">", t.max_end_to_end_ms);
    checks.push_back({"end-to-end latency", s.latency_p99_ms <= t.max_end_to_end_ms, text});
  }
  if (t.min_fps > 0) {
    std::snprintf(text, sizeof(text), "%.1f frames/s %s %.0f", s.fps, s.fps >= t.min_fps ? ">=" : "<", t.min_fps);
    checks.push_back({"frame rate (min_fps)", s.fps >= t.min_fps, text});
  }
  if (t.target_fps > 0) {
    std::snprintf(text, sizeof(text), "%.1f frames/s %s %.0f", s.fps, s.fps >= t.target_fps ? ">=" : "<",
                  t.target_fps);
    checks.push_back({"frame rate (target_fps)", s.fps >= t.target_fps, text});
  }
  if (t.min_iou > 0) {
    if (s.iou < 0) {
      checks.push_back({"IoU", false, "not measured: give --reference MASK_VIDEO"});
    } else {
      std::snprintf(text, sizeof(text), "mean IoU %.3f %s %.2f", s.iou, s.iou >= t.min_iou ? ">=" : "<", t.min_iou);
      checks.push_back({"IoU", s.iou >= t.min_iou, text});
    }
  }
  return checks;
}

}  // namespace kiln
