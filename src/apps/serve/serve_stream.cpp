// GET /v1/segment/stream: a WebSocket on which a live stream's frames come in (one binary message each: JPEG, PNG,
// WebP ...) and their masks go out in order, with the latency mode's stale-frame policy: one frame is segmented at a
// time, at most one waits, and a newer frame replaces the waiting one (which is dropped and reported). Each answer
// is a JSON text message (the frame's number, size, person share, latency, dropped frames) followed by the mask as
// a binary PNG message; a frame that cannot be segmented gets a JSON message with its error and the stream goes on.
// The masks are smoothed in time (the segment pipeline's smoothing), one state per connection.
#include <chrono>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "apps/serve/serve_routes.h"
#include "kiln/codec.h"
#if KILN_HAS_SEGMENT
#include "apps/serve/segment_service.h"
#endif

namespace kiln::serve {

const char* const kSegmentStreamPath = "/v1/segment/stream";

#if KILN_HAS_SEGMENT
namespace {

using StreamClock = std::chrono::steady_clock;

double stream_ms_since(StreamClock::time_point start) {
  return std::chrono::duration<double, std::milli>(StreamClock::now() - start).count();
}

class SegmentStream final : public WebSocketHandler, public std::enable_shared_from_this<SegmentStream> {
 public:
  // The service outlives every call of the stream: it is closed (refusing new frames) before it goes, and its
  // workers, which answer the stream's frames, end with it.
  SegmentStream(SegmentService* service, ServeMetrics* metrics, Scheduling scheduling)
      : m_service(service), m_metrics(metrics), m_scheduling(scheduling) {}

  void on_open(std::shared_ptr<WebSocketChannel> channel) override {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_channel = std::move(channel);
    m_metrics->stream_connections_add(1);
  }

  void on_message(std::string message, bool binary) override {
    Frame frame{m_received++, std::move(message), binary, StreamClock::now()};
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_closed) return;
      if (m_busy) {
        if (m_waiting) drop_waiting_locked();
        m_waiting = std::move(frame);
        return;
      }
      m_busy = true;
    }
    process(std::move(frame));
  }

  void on_closed() override {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_closed = true;
    m_channel.reset();
    if (m_waiting) drop_waiting_locked();
    m_metrics->stream_connections_add(-1);
  }

 private:
  struct Frame {
    int64_t number = 0;
    std::string bytes;
    bool binary = true;
    StreamClock::time_point received;
  };

  void drop_waiting_locked() {
    m_dropped.push_back(m_waiting->number);
    m_metrics->stream_frame_observe("dropped");
    m_waiting.reset();
  }

  // With m_busy set: submits the frame, or answers its error and goes on to the waiting one.
  void process(Frame frame) {
    for (;;) {
      const auto* data = reinterpret_cast<const uint8_t*>(frame.bytes.data());
      std::string problem;
      int status = 415;
      if (!frame.binary) {
        problem = "a frame is a binary message (the image's bytes); this one was text";
        status = 400;
      } else if (image_format_sniff(data, frame.bytes.size()) == ImageFormat::kUnknown) {
        problem = "unsupported image format: " + image_content_describe(data, frame.bytes.size());
      }
      if (problem.empty()) {
        std::vector<uint8_t> bytes(data, data + frame.bytes.size());
        const int64_t number = frame.number;
        const auto received = frame.received;
        m_service->submit(
            std::move(bytes), false, m_scheduling,
            [self = shared_from_this(), number, received](SegmentCallResult result) {
              self->finish(number, received, std::move(result));
            },
            m_temporal);
        return;
      }
      std::optional<Frame> next = answer(failure(frame.number, status, problem), {});
      if (!next) return;
      frame = std::move(*next);
    }
  }

  static nlohmann::json failure(int64_t number, int status, const std::string& error) {
    return {{"frame", number}, {"status", status}, {"error", error}};
  }

  void finish(int64_t number, StreamClock::time_point received, SegmentCallResult result) {
    std::optional<Frame> next;
    if (result.http_status != 200) {
      next = answer(failure(number, result.http_status, result.error), {});
    } else {
      EncodeOptions png;
      png.format = ImageFormat::kPng;
      png.png_compression = 1;
      auto encoded = image_encode(result.mask.view(), png);
      if (!encoded.is_ok()) {
        next = answer(failure(number, 500, "PNG encoding failed: " + encoded.status().message()), {});
      } else {
        const nlohmann::json header = {{"frame", number},
                                       {"status", 200},
                                       {"width", result.mask.width},
                                       {"height", result.mask.height},
                                       {"person_fraction", result.person_fraction},
                                       {"batch_size", result.batch_size},
                                       {"queue_ms", static_cast<double>(result.queue_ns) * 1e-6},
                                       {"latency_ms", stream_ms_since(received)}};
        const std::vector<uint8_t>& bytes = encoded.value();
        next = answer(header, std::string(bytes.begin(), bytes.end()));
      }
    }
    if (next) process(std::move(*next));
  }

  // Sends the answer (with the frames dropped since the last one) and takes the waiting frame, if any; else the
  // stream is idle. Sent under the lock: answers leave in the order of their frames.
  std::optional<Frame> answer(nlohmann::json header, const std::string& mask_png) {
    const bool ok = header["status"] == 200;
    m_metrics->stream_frame_observe(ok ? "answered" : "failed", ok ? header["latency_ms"].get<double>() * 1e-3 : 0);
    std::lock_guard<std::mutex> lock(m_mutex);
    header["dropped"] = m_dropped;
    m_dropped.clear();
    if (const auto channel = m_channel.lock()) {
      channel->send(header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), false);
      if (ok) channel->send(mask_png, true);
    }
    std::optional<Frame> next = std::move(m_waiting);
    m_waiting.reset();
    if (!next || m_closed) {
      next.reset();
      m_busy = false;
    }
    return next;
  }

  SegmentService* m_service;
  ServeMetrics* m_metrics;
  Scheduling m_scheduling;
  std::shared_ptr<SegmentTemporalState> m_temporal = std::make_shared<SegmentTemporalState>();
  int64_t m_received = 0;  // the next frame's number (on_message only: the connection's strand)
  std::mutex m_mutex;
  // Weak: the connection holds its handler, and lives while it reads; holding it back would leak both at exit.
  std::weak_ptr<WebSocketChannel> m_channel;
  bool m_busy = false;  // a frame is being segmented (or answered)
  bool m_closed = false;
  std::optional<Frame> m_waiting;
  std::vector<int64_t> m_dropped;  // since the last answer
};

}  // namespace
#endif

std::map<std::string, WebSocketOpener> websocket_routes(ServeContext& context) {
  std::map<std::string, WebSocketOpener> routes;
  routes[kSegmentStreamPath] = [&context](const HttpRequest& request) {
    WebSocketUpgrade upgrade;
#if KILN_HAS_SEGMENT
    if (!context.segment) {
      upgrade.refusal = http_error(404, "segmentation is not served: start kiln serve with --segment");
      return upgrade;
    }
    if (!context.segment->ready()) {
      upgrade.refusal = http_error(503, context.segment->error());
      return upgrade;
    }
    auto scheduling = request_scheduling(request, context.config.priority_levels);
    if (!scheduling.is_ok()) {
      upgrade.refusal = http_error(400, scheduling.status().message());
      return upgrade;
    }
    // A live stream's frames go first unless the client asked otherwise (kiln-priority).
    if (request.header("kiln-priority").empty()) scheduling.value().priority = 1;
    upgrade.handler = std::make_shared<SegmentStream>(context.segment.get(), &context.metrics, scheduling.value());
#else
    (void)context;
    (void)request;
    upgrade.refusal = http_error(404, "segmentation is not served: this kiln is built without FFmpeg (kiln segment)");
#endif
    return upgrade;
  };
  return routes;
}

}  // namespace kiln::serve
