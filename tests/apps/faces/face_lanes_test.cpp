// FaceLanes: several analyzers on successive batches at once find what one analyzer finds, batch by batch in the
// order started, on real photographs (astronaut.png, grace_hopper.jpg, coffee.png, and a 64 px astronaut that only
// the defaults' second pass finds).
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include "apps/faces/face_lanes.h"
#include "infer/infer_test_util.h"

namespace kiln {
namespace {

ImageBuffer photo_decode(const std::string& path) {
  auto image = image_decode_file(path, DecodeOptions{.channels = 3});
  EXPECT_TRUE(image.is_ok()) << image.status().message();
  return image.is_ok() ? std::move(image).value() : ImageBuffer{};
}

ImageBuffer photo_shrunk(const ImageBuffer& image, int32_t side) {
  const cv::Mat from(image.height, image.width, CV_8UC3, const_cast<uint8_t*>(image.pixels.data()));
  cv::Mat small;
  cv::resize(from, small, cv::Size(side, side), 0, 0, cv::INTER_AREA);
  ImageBuffer out;
  out.width = side;
  out.height = side;
  out.channels = 3;
  out.pixels.assign(small.data, small.data + small.total() * 3);
  return out;
}

ExecSettings lanes_exec(int32_t threads, int64_t batch_size) {
  ExecSettings exec;
  exec.mode = ExecMode::kCpu;
  exec.threads = threads;
  exec.batch_size = batch_size;
  return exec;
}

TEST(FaceLanes, TwoLanesFindWhatOneAnalyzerFindsBatchByBatch) {
  const ImageBuffer astronaut = photo_decode(test::photo_paths()[0]);
  const ImageBuffer hopper = photo_decode(test::photo_paths()[1]);
  const ImageBuffer coffee = photo_decode("/usr/lib/python3/dist-packages/skimage/data/coffee.png");
  const ImageBuffer tiny = photo_shrunk(astronaut, 64);
  const std::vector<const ImageBuffer*> photos = {&astronaut, &coffee, &tiny, &hopper, &tiny, &astronaut};
  FaceSettings settings;  // upscale and enhance auto: the 64 px face is found in the second pass
  settings.min_score = 0.64f;
  const ExecSettings exec = lanes_exec(2, 1);
  const FaceStageModes stages = face_stage_modes_all(exec.mode);

  auto one = FaceAnalyzer::open(settings, exec);
  ASSERT_TRUE(one.is_ok()) << one.status().message();
  auto lanes = FaceLanes::open(settings, exec, stages, 2);
  ASSERT_TRUE(lanes.is_ok()) << lanes.status().message();
  ASSERT_EQ((*lanes)->count(), 2);

  std::vector<VarShapeBatch> batches;
  for (const ImageBuffer* photo : photos) batches.push_back(VarShapeBatch::wrap({photo->view()}));
  std::vector<std::vector<std::vector<Face>>> from_lanes;
  for (const VarShapeBatch& batch : batches) {
    if ((*lanes)->in_flight() == (*lanes)->count()) {
      EXPECT_EQ((*lanes)->start(batch.view()).code(), Errc::kInvalidArgument);  // both lanes busy
      ASSERT_TRUE((*lanes)->finish(&from_lanes.emplace_back()).is_ok());
    }
    ASSERT_TRUE((*lanes)->start(batch.view()).is_ok());
  }
  while ((*lanes)->in_flight() > 0) ASSERT_TRUE((*lanes)->finish(&from_lanes.emplace_back()).is_ok());
  EXPECT_EQ((*lanes)->finish(&from_lanes.emplace_back()).code(), Errc::kInvalidArgument);  // none left
  from_lanes.pop_back();
  ASSERT_EQ(from_lanes.size(), photos.size());

  for (size_t i = 0; i < batches.size(); ++i) {
    SCOPED_TRACE("photo " + std::to_string(i));
    std::vector<std::vector<Face>> alone;
    ASSERT_TRUE((*one)->analyze(batches[i].view(), &alone).is_ok());
    ASSERT_EQ(from_lanes[i].size(), 1u);
    ASSERT_EQ(from_lanes[i][0].size(), alone[0].size());
    for (size_t f = 0; f < alone[0].size(); ++f) {
      const Face& a = alone[0][f];
      const Face& b = from_lanes[i][0][f];
      for (int k = 0; k < 4; ++k) EXPECT_NEAR(a.detection.box[k], b.detection.box[k], 1e-3f);
      EXPECT_GT(face_cosine(a.embedding.data(), b.embedding.data()), 0.9999f);
      EXPECT_EQ(a.scale, b.scale);
      EXPECT_EQ(a.accepted, b.accepted);
    }
  }
  ASSERT_EQ(from_lanes[2][0].size(), 1u);  // the 64 px astronaut, in the second pass
  EXPECT_EQ(from_lanes[2][0][0].scale, 4.0f);
  const FaceStageReport report = (*lanes)->report();
  EXPECT_EQ(report.photos, 6);
  EXPECT_EQ(report.second_pass_photos, 2);  // the two tiny astronauts
  EXPECT_NE(report.enhancement.find("second pass (upscaled, enhanced) on 2 of 6 photos"), std::string::npos)
      << report.enhancement;
  EXPECT_EQ(report.batch_memory, "host; 2 batches at once, each on its own analyzer (1 thread)");
}

TEST(FaceLanes, OneLanePerThreadOnlyForSmallBatchesOnTheCpu) {
  const FaceStageModes cpu = face_stage_modes_all(ExecMode::kCpu);
  EXPECT_EQ(face_lanes_auto(lanes_exec(2, 1), cpu), 2);
  EXPECT_EQ(face_lanes_auto(lanes_exec(4, 1), cpu), 4);
  EXPECT_EQ(face_lanes_auto(lanes_exec(16, 8), cpu), 2);  // lanes x batch size <= kFaceLaneImages
  EXPECT_EQ(face_lanes_auto(lanes_exec(2, 64), cpu), 1);
  EXPECT_EQ(face_lanes_auto(lanes_exec(1, 1), cpu), 1);
  FaceStageModes detection_on_gpu = cpu;
  detection_on_gpu.detection.mode = ExecMode::kGpu;
  EXPECT_EQ(face_lanes_auto(lanes_exec(2, 1), detection_on_gpu), 1);
}

}  // namespace
}  // namespace kiln
