// FaceLanes: several analyzers on the photos of successive batches find what one analyzer finds, batch by batch in the
// order started, on real photographs (astronaut.png, grace_hopper.jpg, coffee.png, and a 64 px astronaut that only
// the defaults' second pass finds).
#include <gtest/gtest.h>

#include "apps/faces/face_lanes.h"
#include "common/face_photos.h"
#include "infer/infer_test_util.h"

namespace kiln {
namespace {

ExecSettings lanes_exec(int32_t threads, int64_t batch_size) {
  ExecSettings exec;
  exec.mode = ExecMode::kCpu;
  exec.threads = threads;
  exec.batch_size = batch_size;
  return exec;
}

TEST(FaceLanes, TwoLanesFindWhatOneAnalyzerFindsBatchByBatch) {
  const ImageBuffer astronaut = test::photo_decode(test::photo_paths()[0]);
  const ImageBuffer hopper = test::photo_decode(test::photo_paths()[1]);
  const ImageBuffer coffee = test::photo_decode("/usr/lib/python3/dist-packages/skimage/data/coffee.png");
  const ImageBuffer tiny = test::photo_resized(astronaut, 64, 64);
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
  EXPECT_EQ((*lanes)->batches_at_once(), 3);  // a photo for each lane, and one more

  std::vector<VarShapeBatch> batches;
  for (const ImageBuffer* photo : photos) batches.push_back(VarShapeBatch::wrap({photo->view()}));
  std::vector<std::vector<std::vector<Face>>> from_lanes;
  for (const VarShapeBatch& batch : batches) {
    if ((*lanes)->in_flight() == (*lanes)->batches_at_once()) {
      EXPECT_EQ((*lanes)->start(batch.view()).code(), Errc::kInvalidArgument);  // enough started
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
  EXPECT_EQ(report.batch_memory, "host; 2 analyzers (1 thread each) taking the batches' photos one at a time");
}

// A batch of 8 cut into photos for two analyzers gives, photo by photo in the batch's order, what one analyzer
// finds in the whole batch.
TEST(FaceLanes, ABatchCutIntoPhotosFindsWhatOneAnalyzerFindsInIt) {
  const ImageBuffer astronaut = test::photo_decode(test::photo_paths()[0]);
  const ImageBuffer hopper = test::photo_decode(test::photo_paths()[1]);
  const ImageBuffer coffee = test::photo_decode("/usr/lib/python3/dist-packages/skimage/data/coffee.png");
  const ImageBuffer tiny = test::photo_resized(astronaut, 64, 64);
  const VarShapeBatch batch = VarShapeBatch::wrap({astronaut.view(), coffee.view(), tiny.view(), hopper.view(),
                                                   hopper.view(), tiny.view(), astronaut.view(), coffee.view()});
  FaceSettings settings;
  settings.min_score = 0.64f;
  const ExecSettings exec = lanes_exec(2, 8);
  const FaceStageModes stages = face_stage_modes_all(exec.mode);
  auto one = FaceAnalyzer::open(settings, exec);
  ASSERT_TRUE(one.is_ok()) << one.status().message();
  std::vector<std::vector<Face>> alone;
  ASSERT_TRUE((*one)->analyze(batch.view(), &alone).is_ok());

  auto lanes = FaceLanes::open(settings, exec, stages, 2);
  ASSERT_TRUE(lanes.is_ok()) << lanes.status().message();
  EXPECT_EQ((*lanes)->batches_at_once(), 2);
  ASSERT_TRUE((*lanes)->start(batch.view()).is_ok());
  ASSERT_TRUE((*lanes)->start(batch.view()).is_ok());
  EXPECT_EQ((*lanes)->start(batch.view()).code(), Errc::kInvalidArgument);
  for (int round = 0; round < 2; ++round) {
    std::vector<std::vector<Face>> cut;
    ASSERT_TRUE((*lanes)->finish(&cut).is_ok());
    ASSERT_EQ(cut.size(), alone.size());
    for (size_t i = 0; i < alone.size(); ++i) {
      SCOPED_TRACE("round " + std::to_string(round) + ", photo " + std::to_string(i));
      ASSERT_EQ(cut[i].size(), alone[i].size());
      for (size_t f = 0; f < alone[i].size(); ++f) {
        for (int k = 0; k < 4; ++k) EXPECT_NEAR(cut[i][f].detection.box[k], alone[i][f].detection.box[k], 1e-3f);
        EXPECT_GT(face_cosine(cut[i][f].embedding.data(), alone[i][f].embedding.data()), 0.9999f);
        EXPECT_EQ(cut[i][f].scale, alone[i][f].scale);
      }
    }
  }
  EXPECT_EQ(alone[2].size(), 1u);  // the 64 px astronaut, in the second pass
  EXPECT_EQ((*lanes)->report().photos, 16);
  EXPECT_EQ((*lanes)->report().second_pass_photos, 4);
}

TEST(FaceLanes, OneLanePerThreadOnTheCpu) {
  const FaceStageModes cpu = face_stage_modes_all(ExecMode::kCpu);
  EXPECT_EQ(face_lanes_auto(lanes_exec(2, 1), cpu), 2);
  EXPECT_EQ(face_lanes_auto(lanes_exec(4, 1), cpu), 4);
  EXPECT_EQ(face_lanes_auto(lanes_exec(16, 8), cpu), 16);
  EXPECT_EQ(face_lanes_auto(lanes_exec(2, 64), cpu), 2);
  EXPECT_EQ(face_lanes_auto(lanes_exec(1, 1), cpu), 1);
  FaceStageModes detection_on_gpu = cpu;
  detection_on_gpu.detection.mode = ExecMode::kGpu;
  EXPECT_EQ(face_lanes_auto(lanes_exec(2, 1), detection_on_gpu), 1);
}

}  // namespace
}  // namespace kiln
