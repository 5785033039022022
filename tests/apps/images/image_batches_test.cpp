// The loop of kiln quality and kiln preprocess (image_batches_run): two batches are processed at once, each into its
// own slot, and their records are finished in input order; a failed batch stops the run once the other has ended.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apps/images/image_batches.h"
#include "common/image_ops_util.h"
#include "core/thread_pool.h"

namespace kiln {
namespace {

// Seven images in batches of two: four batches, the last with one image.
constexpr int64_t kImages = 7;
constexpr int64_t kBatch = 2;

class ImageBatchesRun : public ::testing::Test {
 protected:
  ImageBatchesRun() : m_images(test::random_batch(std::vector<ImageShape>(kImages, {4, 3, 3}), 5)) {}

  ImageBatches batches() const { return ImageBatches::make(ImageInputs{{}, m_images.view()}).value(); }

  // Waits up to 10 s for `count` process calls to have started; true when they did.
  static bool started_wait(const std::atomic<int>& started, int count) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < count) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  VarShapeBatch m_images;
  ThreadPool m_pool{2};
};

TEST_F(ImageBatchesRun, TwoBatchesAreProcessedAtOnceAndFinishedInOrder) {
  std::atomic<int> started{0}, running{0}, most_running{0};
  std::mutex mutex;
  std::vector<BatchSlot> slots;
  const auto process = [&](const DecodedBatch& batch, BatchSlot where, ExecReport* report) -> Status {
    const int now = ++running;
    int most = most_running.load();
    while (now > most && !most_running.compare_exchange_weak(most, now)) {
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      slots.push_back(where);
    }
    // The first batch does not end before the second has started: they can only both start if run at once.
    const bool first = started++ == 0;
    if (first && !started_wait(started, 2)) return Status(Errc::kCancelled, "the second batch never started");
    report->backend = "test " + std::to_string(batch.images.count());
    --running;
    return Status::ok();
  };
  std::vector<std::string> names;
  std::vector<int> finish_slots;
  const auto finish = [&](ImageRecord& record, int64_t k, int slot) -> Status {
    EXPECT_TRUE(record.ok);
    EXPECT_EQ(k, static_cast<int64_t>(names.size()) % kBatch) << record.name;
    names.push_back(record.name);
    finish_slots.push_back(slot);
    return Status::ok();
  };
  std::vector<std::pair<int64_t, int64_t>> done;
  const auto batch_done = [&](int64_t first, int64_t n) -> Status {
    EXPECT_EQ(static_cast<int64_t>(names.size()), first + n) << "told after the batch's records";
    done.emplace_back(first, n);
    return Status::ok();
  };
  std::string backend, placement;
  const Status st = image_batches_run<ImageRecord>(batches(), kBatch, DecodeOptions{}, &m_pool, {}, &backend,
                                                   &placement, process, finish, 0, -1, batch_done);
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(done, (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 2}, {4, 2}, {6, 1}}));
  EXPECT_EQ(most_running.load(), 2);
  EXPECT_EQ(names, (std::vector<std::string>{"#0", "#1", "#2", "#3", "#4", "#5", "#6"}));
  EXPECT_EQ(finish_slots, (std::vector<int>{0, 0, 1, 1, 0, 0, 1}));
  ASSERT_EQ(slots.size(), 4u);
  for (const BatchSlot& s : slots) {
    const int64_t batch = s.decoded_before / kBatch;
    EXPECT_EQ(s.slot, batch % 2) << "batch " << batch;
  }
  EXPECT_EQ(backend, "test 2+test 1");
}

TEST_F(ImageBatchesRun, AFailedBatchStopsTheRunWithItsErrorAfterTheOtherBatchEnds) {
  std::atomic<int> started{0};
  std::atomic<bool> other_ended{false};
  const auto process = [&](const DecodedBatch&, BatchSlot where, ExecReport*) -> Status {
    ++started;
    if (where.decoded_before == kBatch) return Status(Errc::kDeviceError, "batch 1 failed");
    if (where.decoded_before == 2 * kBatch) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      other_ended = true;
    }
    return Status::ok();
  };
  std::vector<std::string> names;
  const auto finish = [&](ImageRecord& record, int64_t, int) -> Status {
    names.push_back(record.name);
    return Status::ok();
  };
  std::string backend, placement;
  const Status st = image_batches_run<ImageRecord>(batches(), kBatch, DecodeOptions{}, &m_pool, {}, &backend,
                                                   &placement, process, finish);
  EXPECT_EQ(st.code(), Errc::kDeviceError);
  EXPECT_EQ(st.message(), "batch 1 failed");
  EXPECT_EQ(names, (std::vector<std::string>{"#0", "#1"})) << "batch 1 and later are not finished";
  // Batch 2 started beside batch 1 once batch 0 was finished; the run waited for it before returning.
  EXPECT_EQ(started.load(), 3);
  EXPECT_TRUE(other_ended.load());
}

// A batch of more than kConcurrentBatchBytes runs alone: the batch before it has ended when it starts, and the one
// after it starts when it has ended. The large image is a view that is never read (nothing here touches pixels).
TEST_F(ImageBatchesRun, ALargeBatchIsProcessedAlone) {
  std::vector<uint8_t> pixels(64);
  const int32_t side = 16384;  // 16384 x 16384 x 3 bytes: 768 MiB as a view
  std::vector<ImageView> views = {m_images[0], image_view_packed(pixels.data(), side, side, 3, PixelType::kU8),
                                  m_images[1]};
  const VarShapeBatch images = VarShapeBatch::wrap(views);
  ASSERT_GT(images[1].packed_bytes(), kConcurrentBatchBytes);
  std::atomic<int> running{0};
  std::atomic<bool> overlapped{false};
  const auto process = [&](const DecodedBatch&, BatchSlot where, ExecReport*) -> Status {
    if (++running > 1 && (where.decoded_before == 1 || where.decoded_before == 2)) overlapped = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    if (where.decoded_before == 1 && running.load() > 1) overlapped = true;
    --running;
    return Status::ok();
  };
  int64_t finished = 0;
  const auto finish = [&](ImageRecord&, int64_t, int) -> Status {
    ++finished;
    return Status::ok();
  };
  std::string backend, placement;
  const Status st = image_batches_run<ImageRecord>(ImageBatches::make(ImageInputs{{}, images.view()}).value(), 1,
                                                   DecodeOptions{}, &m_pool, {}, &backend, &placement, process, finish);
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(finished, 3);
  EXPECT_FALSE(overlapped.load()) << "another batch was processed beside the large one";
}

}  // namespace
}  // namespace kiln
