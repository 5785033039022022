// The face pipeline on real photographs (never solid colours): astronaut.png and grace_hopper.jpg, one face each,
// two people; coffee.png, no person; images made from them (rotated, halved, JPEG q30, a collage, a 40 px face in a
// 4000 px photo).
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include <cmath>

#include "apps/faces/face_decode.h"
#include "apps/faces/face_detector.h"
#include "apps/faces/face_geometry.h"
#include "common/face_photos.h"
#include "infer/infer_test_util.h"
#include "kiln/apps/faces.h"

namespace kiln {
namespace {

const char* kCoffee = "/usr/lib/python3/dist-packages/skimage/data/coffee.png";


ImageBuffer jpeg_roundtrip(const ImageBuffer& image, int32_t quality) {
  EncodeOptions options;
  options.format = ImageFormat::kJpeg;
  options.jpeg_quality = quality;
  auto bytes = image_encode(image.view(), options);
  EXPECT_TRUE(bytes.is_ok());
  auto decoded = image_decode(bytes->data(), bytes->size(), DecodeOptions{.channels = 3});
  EXPECT_TRUE(decoded.is_ok());
  return std::move(decoded).value();
}

class FaceAnalyzerTest : public ::testing::Test {
 protected:
  static std::vector<std::vector<Face>> analyze(const std::vector<const ImageBuffer*>& images,
                                                FaceSettings settings = {}) {
    ExecSettings exec;
    exec.mode = ExecMode::kCpu;
    exec.threads = 2;
    exec.batch_size = 8;
    auto analyzer = FaceAnalyzer::open(settings, exec);
    EXPECT_TRUE(analyzer.is_ok()) << analyzer.status().message();
    if (!analyzer.is_ok()) return {};
    std::vector<ImageView> views;
    for (const ImageBuffer* image : images) views.push_back(image->view());
    const VarShapeBatch batch = VarShapeBatch::wrap(views);
    std::vector<std::vector<Face>> faces;
    const Status s = (*analyzer)->analyze(batch.view(), &faces);
    EXPECT_TRUE(s.is_ok()) << s.message();
    return faces;
  }
  static void SetUpTestSuite() {
    astronaut = new ImageBuffer(test::photo_decode(test::photo_paths()[0]));
    hopper = new ImageBuffer(test::photo_decode(test::photo_paths()[1]));
  }
  static void TearDownTestSuite() {
    delete astronaut;
    delete hopper;
  }
  static ImageBuffer* astronaut;
  static ImageBuffer* hopper;
};
ImageBuffer* FaceAnalyzerTest::astronaut = nullptr;
ImageBuffer* FaceAnalyzerTest::hopper = nullptr;

bool box_contains(const Face& face, float x, float y) {
  const float* b = face.detection.box;
  return x >= b[0] && x <= b[0] + b[2] && y >= b[1] && y <= b[1] + b[3];
}

TEST_F(FaceAnalyzerTest, OneFacePerPortraitWithTheBoxOnTheFace) {
  const auto faces = analyze({astronaut, hopper});
  ASSERT_EQ(faces.size(), 2u);
  ASSERT_EQ(faces[0].size(), 1u);
  ASSERT_EQ(faces[1].size(), 1u);
  // astronaut.png: the face is near (224, 128), about 92 px (measured with OpenCV DNN on the same model family).
  const Face& a = faces[0][0];
  EXPECT_TRUE(box_contains(a, 224, 128)) << a.detection.box[0] << "," << a.detection.box[1];
  EXPECT_NEAR(a.face_size, 92, 25);
  EXPECT_GT(a.detection.score, 0.75f);
  // The landmarks sit on the face in anatomical order: eyes above the nose above the mouth, right eye image-left.
  const auto& p = a.detection.landmarks;
  EXPECT_LT(p[kRightEye][0], p[kLeftEye][0]);
  EXPECT_LT(p[kRightEye][1], p[kNoseTip][1]);
  EXPECT_LT(p[kNoseTip][1], p[kMouthCentre][1]);
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(box_contains(a, p[k][0], p[k][1])) << "landmark " << k;
  // Grace Hopper: the face is in the upper middle of the 512 x 600 photo.
  const Face& h = faces[1][0];
  EXPECT_TRUE(box_contains(h, 256, 190)) << h.detection.box[0] << "," << h.detection.box[1];
  for (const Face* f : {&a, &h}) {
    ASSERT_EQ(f->embedding.size(), static_cast<size_t>(kFaceEmbeddingSize));
    EXPECT_NEAR(face_cosine(f->embedding.data(), f->embedding.data()), 1.0f, 1e-4f);
    EXPECT_LT(std::abs(f->pose.yaw), 25.0f);
    EXPECT_LT(std::abs(f->pose.roll), 15.0f);
    EXPECT_GT(f->quality.brightness, 20);
    EXPECT_GT(f->quality.score, 0);
  }
}

TEST_F(FaceAnalyzerTest, PhotoWithoutAPersonHasNoFace) {
  const ImageBuffer coffee = test::photo_decode(kCoffee);
  const auto faces = analyze({&coffee});
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_TRUE(faces[0].empty()) << faces[0].size() << " faces, first score " << faces[0][0].detection.score;
}

// Each change on its own: rotated 15 degrees, scaled by half, recompressed at JPEG q30 (measured 0.93-0.96). All
// three at once leave a 46 px face in 8 px JPEG blocks and measure 0.74: that is the photo, not the pipeline.
TEST_F(FaceAnalyzerTest, SamePersonTransformedStaysCloseDifferentPeopleDoNot) {
  const auto transformed = [&](double angle, double scale, int32_t quality) {
    cv::Mat out;
    const cv::Mat m = cv::getRotationMatrix2D(cv::Point2f(224, 128), angle, scale);
    cv::warpAffine(test::photo_mat(*astronaut), out, m, cv::Size(astronaut->width, astronaut->height), cv::INTER_LINEAR,
                   cv::BORDER_CONSTANT);
    return jpeg_roundtrip(test::photo_from_mat(out), quality);
  };
  const ImageBuffer rotated = transformed(15, 1, 95);
  const ImageBuffer halved = transformed(0, 0.5, 95);
  const ImageBuffer q30 = transformed(0, 1, 30);
  const auto faces = analyze({astronaut, &rotated, &halved, &q30, hopper});
  ASSERT_EQ(faces.size(), 5u);
  for (size_t i = 0; i < faces.size(); ++i) ASSERT_EQ(faces[i].size(), 1u) << "image " << i;
  const float* reference = faces[0][0].embedding.data();
  for (size_t i = 1; i <= 3; ++i) {
    EXPECT_GT(face_cosine(reference, faces[i][0].embedding.data()), 0.8f) << "variant " << i;
  }
  EXPECT_LT(face_cosine(reference, faces[4][0].embedding.data()), 0.4f);
  // cv::getRotationMatrix2D turns counter-clockwise for a positive angle: the eye line now rises to the right.
  EXPECT_NEAR(faces[1][0].pose.roll - faces[0][0].pose.roll, -15.0f, 5.0f);
}

TEST_F(FaceAnalyzerTest, UltraFaceBoxesGetLandmarksAndTheSameEmbedding) {
  const auto blaze = analyze({astronaut, hopper});
  FaceSettings settings;
  settings.detector = "ultraface";
  const auto ultra = analyze({astronaut, hopper}, settings);
  ASSERT_EQ(ultra.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(ultra[i].size(), 1u) << i;
    ASSERT_EQ(blaze[i].size(), 1u) << i;
    EXPECT_EQ(ultra[i][0].detection.landmark_count, 6);
    EXPECT_GT(face_iou(ultra[i][0].detection, blaze[i][0].detection), 0.4f);
    EXPECT_GT(face_cosine(ultra[i][0].embedding.data(), blaze[i][0].embedding.data()), 0.9f);
  }
}

TEST_F(FaceAnalyzerTest, CollageFindsEveryPortrait) {
  // Four portraits side by side: the two photos and their mirror images, on one 1024 x 600 canvas.
  cv::Mat canvas(600, 1024, CV_8UC3, cv::Scalar(0, 0, 0));
  cv::Mat a;
  cv::Mat h;
  cv::resize(test::photo_mat(*astronaut)(cv::Rect(96, 0, 256, 300)), a, cv::Size(256, 300));
  cv::resize(test::photo_mat(*hopper)(cv::Rect(56, 0, 400, 470)), h, cv::Size(256, 300));
  cv::Mat a_flip;
  cv::Mat h_flip;
  cv::flip(a, a_flip, 1);
  cv::flip(h, h_flip, 1);
  a.copyTo(canvas(cv::Rect(0, 0, 256, 300)));
  h.copyTo(canvas(cv::Rect(256, 300, 256, 300)));
  a_flip.copyTo(canvas(cv::Rect(512, 0, 256, 300)));
  h_flip.copyTo(canvas(cv::Rect(768, 300, 256, 300)));
  const ImageBuffer collage = test::photo_from_mat(canvas);
  const auto faces = analyze({&collage});
  ASSERT_EQ(faces.size(), 1u);
  ASSERT_EQ(faces[0].size(), 4u);
  for (const auto& [x, y] : {std::pair{128, 128}, {384, 450}, {640, 128}, {896, 450}}) {
    int hits = 0;
    for (const Face& f : faces[0]) hits += box_contains(f, static_cast<float>(x), static_cast<float>(y)) ? 1 : 0;
    EXPECT_EQ(hits, 1) << "portrait at " << x << "," << y;
  }
}

TEST_F(FaceAnalyzerTest, FortyPixelFaceInAFourThousandPixelPhotoIsFound) {
  // A real background (coffee.png scaled up to 4000 x 3000) with the astronaut's head scaled so the face is ~40 px.
  cv::Mat background;
  cv::resize(test::photo_mat(test::photo_decode(kCoffee)), background, cv::Size(4000, 3000), 0, 0, cv::INTER_LINEAR);
  cv::Mat head;
  cv::resize(test::photo_mat(*astronaut)(cv::Rect(150, 40, 150, 180)), head, cv::Size(66, 79), 0, 0, cv::INTER_AREA);
  head.copyTo(background(cv::Rect(2900, 700, head.cols, head.rows)));
  const ImageBuffer big = test::photo_from_mat(background);
  FaceSettings settings;
  settings.thresholds.min_face_size = 30;
  const auto faces = analyze({&big}, settings);
  ASSERT_EQ(faces.size(), 1u);
  int found = 0;
  for (const Face& f : faces[0]) found += box_contains(f, 2900 + 33, 700 + 38) ? 1 : 0;
  EXPECT_EQ(found, 1) << faces[0].size() << " faces";
  // Without the tile search the same face is too small for the whole-image pass.
  settings.small_faces = "off";
  const auto whole = analyze({&big}, settings);
  int found_whole = 0;
  for (const Face& f : whole[0]) found_whole += box_contains(f, 2900 + 33, 700 + 38) ? 1 : 0;
  EXPECT_EQ(found_whole, 0);
}

// A tile edge through a face: the tile on one side sees part of it, a tile overlapping it the whole (tiles overlap
// by half). A detection reaching a tile's inner edge is left to the region that holds the face whole: one face, the
// box found with no edge near it, and no pieces of the background boxed as faces where tile edges cut them (UltraFace
// found four such here).
TEST_F(FaceAnalyzerTest, TileEdgesDoNotCutFacesIntoPieces) {
  FaceSettings settings;
  settings.detector = "ultraface";
  settings.thresholds.min_face_size = 30;
  settings.small_faces = "on";
  InferOptions options;
  options.mode = ExecMode::kCpu;
  options.threads = 2;
  OpExecutor executor(ExecOptions{.mode = ExecMode::kCpu});
  auto detector = FaceDetector::open(settings, options, executor);
  ASSERT_TRUE(detector.is_ok()) << detector.status().message();
  int32_t tile = 1 << 30;
  for (const RectI& r : detector.value()->regions(4000, 3000, 1)) tile = std::min(tile, r.width);
  const int32_t step = tile / 2;  // the finest tiles start every step pixels and end on the same grid
  cv::Mat background;
  cv::resize(test::photo_mat(test::photo_decode(kCoffee)), background, cv::Size(4000, 3000), 0, 0, cv::INTER_LINEAR);
  cv::Mat head;
  const int32_t head_width = step * 3 / 4, head_height = head_width * 6 / 5;
  cv::resize(test::photo_mat(*astronaut)(cv::Rect(150, 40, 150, 180)), head, cv::Size(head_width, head_height), 0, 0,
             cv::INTER_AREA);
  // Head A between two tile edges; head B with an edge a third of the way into it, across and down.
  const int32_t ax = 5 * step + (step - head_width) / 2, ay = 10 * step + (step - head_height) / 2;
  const int32_t bx = 15 * step - head_width / 3, by = 10 * step - head_height / 3;
  ASSERT_LT(std::max(ay, by) + head_height, 3000) << "tile " << tile;
  head.copyTo(background(cv::Rect(ax, ay, head_width, head_height)));
  head.copyTo(background(cv::Rect(bx, by, head_width, head_height)));
  const ImageBuffer big = test::photo_from_mat(background);
  const auto faces = analyze({&big}, settings);
  ASSERT_EQ(faces.size(), 1u);
  const auto on_head = [&](int32_t x, int32_t y) {  // the faces with a quarter of their box or more on the head at x, y
    std::vector<const Face*> found;
    for (const Face& f : faces[0]) {
      const float* box = f.detection.box;
      const float w = std::min(box[0] + box[2], static_cast<float>(x + head_width)) - std::max(box[0], float(x));
      const float h = std::min(box[1] + box[3], static_cast<float>(y + head_height)) - std::max(box[1], float(y));
      if (w > 0 && h > 0 && w * h >= 0.25f * box[2] * box[3]) found.push_back(&f);
    }
    return found;
  };
  const auto a = on_head(ax, ay), b = on_head(bx, by);
  ASSERT_EQ(a.size(), 1u) << "tile " << tile;
  ASSERT_EQ(b.size(), 1u) << "tile " << tile << ": the head under the tile edge came out as " << b.size() << " faces";
  // Elsewhere the coffee's patterns, cut by tile edges, were boxed as four more faces; the one left is no tile's cut.
  EXPECT_LE(faces[0].size(), 3u) << faces[0].size() - 2 << " faces on the background";
  FaceDetection moved = b[0]->detection;  // B moved onto A: the same face, the same pixels in it
  moved.box[0] += static_cast<float>(ax - bx);
  moved.box[1] += static_cast<float>(ay - by);
  EXPECT_GT(face_iou(a[0]->detection, moved), 0.85f)
      << "A " << a[0]->detection.box[0] << "," << a[0]->detection.box[1] << " " << a[0]->detection.box[2] << "x"
      << a[0]->detection.box[3] << "; B moved " << moved.box[0] << "," << moved.box[1] << " " << moved.box[2] << "x"
      << moved.box[3];
}

TEST_F(FaceAnalyzerTest, BatchEqualsOneImageAtATime) {
  const ImageBuffer coffee = test::photo_decode(kCoffee);
  const auto together = analyze({astronaut, &coffee, hopper});
  const std::vector<const ImageBuffer*> each = {astronaut, &coffee, hopper};
  ASSERT_EQ(together.size(), 3u);
  for (size_t i = 0; i < each.size(); ++i) {
    const auto alone = analyze({each[i]});
    ASSERT_EQ(alone[0].size(), together[i].size()) << i;
    for (size_t f = 0; f < alone[0].size(); ++f) {
      for (int k = 0; k < 4; ++k) EXPECT_NEAR(alone[0][f].detection.box[k], together[i][f].detection.box[k], 1e-3f);
      EXPECT_GT(face_cosine(alone[0][f].embedding.data(), together[i][f].embedding.data()), 0.9999f);
      EXPECT_EQ(alone[0][f].accepted, together[i][f].accepted);
    }
  }
}

// The defaults' second pass: small photos in which the photo as it is shows no face above the threshold are upscaled
// 4x and enhanced, searched again, and the face is found (a 64 px astronaut; a 56 px one at 12 % brightness). The
// thresholds sit between the two passes' best scores (0.60 / 0.68 and 0.53 / 0.65 here). A photo whose face the first
// pass found is not prepared (scale 1).
TEST_F(FaceAnalyzerTest, SmallAndDarkFacesMissedAsTheyAreAreFoundInTheSecondPass) {
  struct Case {
    int32_t side;
    double brightness;
    float min_score;
  };
  for (const Case c : {Case{64, 1.0, 0.64f}, Case{56, 0.12, 0.59f}}) {
    SCOPED_TRACE(std::to_string(c.side) + " px at " + std::to_string(c.brightness));
    cv::Mat small;
    cv::resize(test::photo_mat(*astronaut), small, cv::Size(c.side, c.side), 0, 0, cv::INTER_AREA);
    small.convertTo(small, CV_8UC3, c.brightness);
    const ImageBuffer photo = test::photo_from_mat(small);
    FaceSettings settings;
    settings.min_score = c.min_score;
    ExecSettings exec;
    exec.mode = ExecMode::kCpu;
    exec.threads = 2;
    auto analyzer = FaceAnalyzer::open(settings, exec);
    ASSERT_TRUE(analyzer.is_ok()) << analyzer.status().message();
    const VarShapeBatch batch = VarShapeBatch::wrap({photo.view(), astronaut->view()});
    std::vector<std::vector<Face>> faces;
    ASSERT_TRUE((*analyzer)->analyze(batch.view(), &faces).is_ok());
    ASSERT_EQ(faces[0].size(), 1u);
    EXPECT_EQ(faces[0][0].scale, 4.0f);
    EXPECT_TRUE(box_contains(faces[0][0], 0.4375f * c.side, 0.25f * c.side));  // the face, in the photo's pixels
    ASSERT_EQ(faces[1].size(), 1u);
    EXPECT_EQ(faces[1][0].scale, 1.0f);
    const std::string report = (*analyzer)->report().enhancement;
    EXPECT_NE(report.find("second pass (upscaled, enhanced) on 1 of 2 photos"), std::string::npos) << report;
    FaceSettings plain = settings;
    plain.upscale = "off";
    plain.enhance = "off";
    EXPECT_TRUE(analyze({&photo}, plain)[0].empty());
  }
}

// An upscaled photo is searched for small faces as the photo it came from: a 1536 x 512 photo doubled to 3072 x 1024
// is not "over 2048 px", and on request its smallest tiles find min_face_size original pixels, not half of that.
TEST(FaceDetectorRegions, UpscaledPhotosAreJudgedOnTheirOwnSize) {
  FaceSettings settings;
  InferOptions options;
  options.mode = ExecMode::kCpu;
  options.threads = 1;
  OpExecutor executor(ExecOptions{.mode = ExecMode::kCpu});
  auto detector = FaceDetector::open(settings, options, executor);
  ASSERT_TRUE(detector.is_ok()) << detector.status().message();
  EXPECT_EQ(detector.value()->regions(3072, 1024, 2).size(), 1u);
  EXPECT_GT(detector.value()->regions(3072, 1024, 1).size(), 1u);
  settings.small_faces = "on";
  auto searching = FaceDetector::open(settings, options, executor);
  ASSERT_TRUE(searching.is_ok());
  const auto smallest = [](const std::vector<RectI>& regions) {
    int32_t side = 1 << 30;
    for (const RectI& r : regions) side = std::min(side, std::max(r.width, r.height));
    return side;
  };
  const FaceDetector& d = *searching.value();
  EXPECT_EQ(smallest(d.regions(3072, 1024, 2)), 2 * smallest(d.regions(3072, 1024, 1)));
}

TEST(FaceDecode, AnchorsFollowMediaPipesLayout) {
  for (const int32_t size : {128, 256}) {
    const auto anchors = blazeface_anchors(size);
    ASSERT_EQ(anchors.size(), 896u);
    // First anchors: the finest grid (16 x 16), two per cell; then 8 x 8 with six per cell.
    EXPECT_FLOAT_EQ(anchors[0].cx, 0.5f / 16);
    EXPECT_FLOAT_EQ(anchors[1].cx, 0.5f / 16);
    EXPECT_FLOAT_EQ(anchors[2].cx, 1.5f / 16);
    EXPECT_FLOAT_EQ(anchors[512].cx, 0.5f / 8);
    EXPECT_FLOAT_EQ(anchors[517].cx, 0.5f / 8);
    EXPECT_FLOAT_EQ(anchors[518].cx, 1.5f / 8);
    EXPECT_FLOAT_EQ(anchors[895].cy, 7.5f / 8);
  }
}

TEST(FaceDecode, WeightedNmsBlendsOverlapsAndKeepsSeparateFaces) {
  FaceDetection a;
  a.box[0] = 10, a.box[1] = 10, a.box[2] = 100, a.box[3] = 100, a.score = 0.9f;
  FaceDetection b = a;
  b.box[0] = 20, b.score = 0.3f;
  FaceDetection c = a;
  c.box[0] = 500, c.score = 0.5f;
  const auto weighted = face_nms({b, c, a}, 0.3f, true);
  ASSERT_EQ(weighted.size(), 2u);
  EXPECT_FLOAT_EQ(weighted[0].score, 0.9f);
  EXPECT_NEAR(weighted[0].box[0], (10 * 0.9f + 20 * 0.3f) / 1.2f, 1e-4f);
  EXPECT_FLOAT_EQ(weighted[1].box[0], 500);
  const auto plain = face_nms({b, c, a}, 0.3f, false);
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_FLOAT_EQ(plain[0].box[0], 10);
}

TEST(FaceGeometry, AlignmentOfTheTemplateIsTheIdentityAndPoseIsZero) {
  FaceDetection face;
  face.landmark_count = 6;
  const float points[4][2] = {{38.2946f, 51.6963f}, {73.5318f, 51.5014f}, {56.0252f, 71.7366f}, {56.1396f, 92.2848f}};
  for (int k = 0; k < 4; ++k) {
    face.landmarks[k][0] = points[k][0];
    face.landmarks[k][1] = points[k][1];
  }
  float m[6];
  ASSERT_TRUE(face_alignment_matrix(face, m).is_ok());
  EXPECT_NEAR(m[0], 1, 1e-3);
  EXPECT_NEAR(m[1], 0, 1e-3);
  EXPECT_NEAR(m[2], 0, 0.05);
  EXPECT_NEAR(m[4], 1, 1e-3);
  const FacePose pose = face_pose_estimate(face);
  EXPECT_NEAR(pose.yaw, 0, 1.5);
  EXPECT_NEAR(pose.pitch, 0, 1.5);
  EXPECT_NEAR(pose.roll, 0, 0.5);
  // Nose moved towards the image's right by a third of the eye distance: turned right, atan(0.33 / 0.6) ~ 29 deg.
  face.landmarks[kNoseTip][0] += (73.5318f - 38.2946f) / 3;
  EXPECT_NEAR(face_pose_estimate(face).yaw, 29, 2);
}

}  // namespace
}  // namespace kiln
