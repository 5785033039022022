// One run of the segment pipeline over inputs and their outputs (segment_run.cpp): decode, the shared batcher and
// inference, temporal smoothing, the matte and the encode, several inputs at once.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "apps/segment/segment_preview.h"
#include "kiln/apps/segment.h"

namespace kiln {

// Called on a writer thread when input k's output is complete (its summary filled in); an error stops the run.
using SegmentFinishedFn = std::function<Status(size_t k, const SegmentStreamSummary& stream)>;

// inputs[k] -> outputs[k] (output kind and settings from config; the file appears only when complete). With
// config.preview, previews (when given) receives each input's frames and series for segment_preview_write.
Result<SegmentJobSummary> segment_streams_run(const SegmentJobConfig& config, const std::vector<std::string>& inputs,
                                              const std::vector<std::string>& outputs,
                                              const SegmentProgressFn& on_progress, const LogFn& log,
                                              const SegmentFinishedFn& on_finished = {},
                                              std::vector<std::unique_ptr<SegmentPreviewStream>>* previews = nullptr);

// Each of `targets` set (end-to-end latency, frame rate, IoU) against the run's summary: met or not, and the figures.
std::vector<SegmentTargetCheck> segment_targets_check(const SegmentTargets& targets, const SegmentJobSummary& summary);

}  // namespace kiln
