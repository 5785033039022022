// The segmentation model behind kiln serve's POST /v1/segment: concurrent requests' images go through one
// DynamicBatcher to `instances` worker threads, each owning the segment application's model (SegmentModel, with its
// input stager and image-op executor), which decode (kiln's codec), preprocess and infer a batch at a time, then make
// each image's mask at its own size as kiln segment does (FrameMatte, the same threshold), with no temporal smoothing:
// every image stands alone. Built with the segment application (KILN_HAS_SEGMENT: ONNX Runtime and FFmpeg).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/serve/http_types.h"
#include "apps/serve/serve_metrics.h"
#include "kiln/apps/segment.h"
#include "kiln/codec.h"
#include "pipeline/batcher.h"

namespace kiln::serve {

struct SegmentCallResult {
  int http_status = 200;  // 400 unreadable image, 429 queue full, 503 closed, 504 timed out, 500 failed
  std::string error;
  ImageBuffer rgb;   // the decoded photo (RGB), when asked for (keep_rgb)
  ImageBuffer mask;  // width x height, 1 channel, 255 = person, 0 = not
  double person_fraction = 0;
  int32_t batch_size = 0;
  int64_t queue_ns = 0;
};
using SegmentCallDone = std::function<void(SegmentCallResult)>;

// A stream's person probability smoothed in time (SegmentSettings::temporal), as SegmentSmoother keeps it on the
// host: each frame's mask is made from the map after it. One per stream, whose frames are submitted one at a time.
struct SegmentTemporalState {
  std::vector<float> map;
  int32_t width = 0, height = 0;
};

struct SegmentServiceConfig {
  SegmentSettings segment;  // the packaged selfie model, kiln segment's threshold
  ExecSettings exec;
  int32_t instances = 1;
  BatcherConfig batcher;
};

class SegmentService {
 public:
  // Opens every instance's model; a failure leaves the service not ready (error() says why), never fails here.
  SegmentService(const SegmentServiceConfig& config, ServeMetrics* metrics, LogFn log);
  ~SegmentService();
  SegmentService(const SegmentService&) = delete;
  SegmentService& operator=(const SegmentService&) = delete;

  // `done` runs exactly once, on a worker thread or (for a refusal) on the caller's. With `temporal`, the frame's
  // probability is smoothed with the stream's previous ones before its mask is made.
  void submit(std::vector<uint8_t> bytes, bool keep_rgb, Scheduling scheduling, SegmentCallDone done,
              std::shared_ptr<SegmentTemporalState> temporal = {});
  // Stops intake; what is queued is still segmented; the workers end once it is.
  void close();

  bool ready() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }
  bool gpu_used() const;
  int64_t fallbacks() const;
  size_t queued() const { return m_batcher ? m_batcher->pending() : 0; }

 private:
  struct Instance;
  struct Job {
    std::vector<uint8_t> bytes;
    bool keep_rgb = false;
    std::shared_ptr<SegmentTemporalState> temporal;
    std::shared_ptr<SegmentCallResult> result;
    std::shared_ptr<SegmentCallDone> done;
  };
  void worker_loop(Instance* instance);
  void batch_run(Instance* instance, Batch<Job>& batch);

  ServeMetrics* m_metrics;
  SegmentSettings m_settings;
  std::string m_error;
  std::vector<std::unique_ptr<Instance>> m_instances;
  std::unique_ptr<DynamicBatcher<Job>> m_batcher;
  std::vector<std::thread> m_workers;
};

}  // namespace kiln::serve
