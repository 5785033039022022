#include "apps/serve/segment_service.h"

#if KILN_HAS_SEGMENT

#include <chrono>

#include "apps/segment/frame_matte.h"
#include "apps/segment/mask_temporal.h"
#include "apps/segment/segment_model.h"
#include "core/thread_pool.h"
#include "infer/input_stager.h"
#include "kiln/exec.h"

namespace kiln::serve {

namespace {

int64_t segment_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool segment_timeout(const Status& status) {
  return status.code() == Errc::kCancelled && status.message().find("timed out") != std::string::npos;
}

void segment_refuse(const SegmentCallDone& done, int http_status, std::string error) {
  SegmentCallResult refusal;
  refusal.http_status = http_status;
  refusal.error = std::move(error);
  done(std::move(refusal));
}

}  // namespace

// One worker's model, as kiln segment's engine opens it: the image ops (preprocess, matte) placed by the executor.
struct SegmentService::Instance {
  ThreadPool pool;
  OpExecutor executor;
  std::unique_ptr<SegmentModel> model;
  std::unique_ptr<InputStager> stager;
  StagedInput input;  // reused from batch to batch

  Instance(const ExecSettings& exec, const LogFn& log)
      : pool(exec.threads), executor(exec_options_make(exec, &pool), log) {}
};

SegmentService::SegmentService(const SegmentServiceConfig& config, ServeMetrics* metrics, LogFn log)
    : m_metrics(metrics), m_settings(config.segment) {
  InferOptions options;
  options.mode = config.exec.mode;
  options.threads = config.exec.threads;
  options.spin_wait = false;  // decoding and the mattes share the cores
  for (int32_t i = 0; i < std::max(1, config.instances); ++i) {
    auto instance = std::make_unique<Instance>(config.exec, log);
    auto model = SegmentModel::open(config.segment, options);
    if (!model.is_ok()) {
      m_error = "the segmentation model failed to load: " + model.status().message();
      m_instances.clear();
      return;
    }
    instance->model = std::move(model).value();
    SegmentModel& m = *instance->model;
    instance->stager = std::make_unique<InputStager>(m.session(), instance->executor, m.preprocess(), m.input_width(),
                                                     m.input_height(), m.input_layout());
    m_instances.push_back(std::move(instance));
  }
  ServeMetrics* const observed = m_metrics;
  auto on_complete = [observed](Job& job, const BatchResponse& response) {
    if (!response.status.is_ok()) {
      const bool timeout = segment_timeout(response.status);
      observed->rejected_observe("segment", timeout ? "timeout" : "failed");
      return segment_refuse(*job.done, timeout ? 504 : 500,
                            timeout ? "the request waited in the queue past its timeout" : response.status.message());
    }
    job.result->batch_size = response.batch_size;
    job.result->queue_ns = response.queue_ns;
    (*job.done)(std::move(*job.result));
  };
  auto batcher = DynamicBatcher<Job>::create(config.batcher, nullptr, on_complete);
  if (!batcher.is_ok()) {
    m_error = "segment batcher: " + batcher.status().message();
    return;
  }
  m_batcher = std::move(batcher).value();
  for (auto& instance : m_instances) m_workers.emplace_back([this, i = instance.get()] { worker_loop(i); });
}

SegmentService::~SegmentService() {
  close();
  for (auto& worker : m_workers) worker.join();
}

void SegmentService::close() {
  if (m_batcher) m_batcher->close();
}

bool SegmentService::gpu_used() const {
  return ready() && m_instances.front()->model->session().report().provider != "cpu";
}

int64_t SegmentService::fallbacks() const {
  int64_t count = 0;
  for (const auto& instance : m_instances) {
    count += static_cast<int64_t>(instance->model->session().report().fallbacks.size());
  }
  return count;
}

void SegmentService::submit(std::vector<uint8_t> bytes, bool keep_rgb, Scheduling scheduling, SegmentCallDone done,
                            std::shared_ptr<SegmentTemporalState> temporal) {
  if (!ready()) return segment_refuse(done, 503, m_error);
  const size_t size = bytes.size();
  Job job{std::move(bytes), keep_rgb, std::move(temporal), std::make_shared<SegmentCallResult>(),
          std::make_shared<SegmentCallDone>(std::move(done))};
  auto done_copy = job.done;
  const Status st = m_batcher->enqueue(std::move(job), scheduling.priority, scheduling.timeout_us, size);
  if (!st.is_ok()) {
    const bool full = st.message().find("full") != std::string::npos;
    m_metrics->rejected_observe("segment", full ? "queue_full" : "closed");
    segment_refuse(*done_copy, full ? 429 : 503, full ? "the segment queue is full: retry later" : st.message());
  }
}

void SegmentService::worker_loop(Instance* instance) {
  for (;;) {
    auto batch = m_batcher->next_batch();
    if (!batch.is_ok()) return;  // closed and drained
    if (batch.value().empty()) continue;
    batch_run(instance, batch.value());
  }
}

// Decoded images of the batch run through the model together; each mask is made at its image's size.
void SegmentService::batch_run(Instance* instance, Batch<Job>& batch) {
  const int64_t start = segment_now_ns();
  std::vector<size_t> decoded;
  std::vector<ImageView> views;
  DecodeOptions decode;
  decode.channels = 3;
  for (size_t k = 0; k < batch.size(); ++k) {
    Job& job = batch.items[k].request;
    auto image = image_decode(job.bytes.data(), job.bytes.size(), decode);
    job.bytes = {};
    if (!image.is_ok()) {
      job.result->http_status = 400;
      job.result->error = "the image could not be read: " + image.status().message();
      continue;
    }
    job.result->rgb = std::move(image).value();
    views.push_back(job.result->rgb.view());
    decoded.push_back(k);
  }
  Status st = Status::ok();
  std::vector<std::vector<float>> probs;
  int32_t prob_width = 0, prob_height = 0;
  SegmentModel& model = *instance->model;
  if (!views.empty()) {
    const VarShapeBatch images = VarShapeBatch::wrap(std::move(views));
    ExecReport report;
    st = instance->stager->stage(images.view(), &instance->input, &report);
    if (st.is_ok()) st = model.run(*instance->stager, instance->input, &probs, &prob_width, &prob_height);
  }
  for (size_t j = 0; j < decoded.size(); ++j) {
    SegmentCallResult& result = *batch.items[decoded[j]].request.result;
    if (!st.is_ok()) {
      result.http_status = 500;
      result.error = "segmentation failed: " + st.message();
      continue;
    }
    const ImageBuffer& rgb = result.rgb;
    const float* prob = probs[j].data();
    if (SegmentTemporalState* temporal = batch.items[decoded[j]].request.temporal.get()) {
      // SegmentSmoother's host step: a map of another size starts the stream again.
      if (temporal->width != prob_width || temporal->height != prob_height || temporal->map.size() != probs[j].size()) {
        temporal->map = probs[j];
        temporal->width = prob_width;
        temporal->height = prob_height;
      } else {
        mask_temporal_smooth(probs[j].data(), temporal->map.data(), temporal->map.size(), m_settings.temporal);
      }
      prob = temporal->map.data();
    }
    const MatteRegion region = matte_region(rgb.width, rgb.height, model.input_width(), model.input_height(),
                                            prob_width, prob_height, m_settings.letterbox);
    auto matte = FrameMatte::make(rgb.width, rgb.height, prob_width, prob_height, region, SegmentOutput::kMask,
                                  m_settings, "", 1);
    Result<double> share = matte.is_ok() ? matte.value().render(rgb.view(), prob, &result.mask,
                                                                instance->executor)
                                         : Result<double>(matte.status());
    if (!share.is_ok()) {
      result.http_status = 500;
      result.error = "the mask failed: " + share.status().message();
      continue;
    }
    result.person_fraction = share.value();
    if (!batch.items[decoded[j]].request.keep_rgb) result.rgb = ImageBuffer();
  }
  const int64_t compute_ns = segment_now_ns() - start;
  std::vector<double> queue_seconds;
  for (const auto& item : batch.items) queue_seconds.push_back(static_cast<double>(item.queue_ns) * 1e-9);
  m_metrics->batch_observe("segment", static_cast<int32_t>(batch.size()), static_cast<double>(compute_ns) * 1e-9,
                           queue_seconds);
  m_batcher->complete(batch, compute_ns);
}

}  // namespace kiln::serve

#endif  // KILN_HAS_SEGMENT
