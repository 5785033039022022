// kiln faces --preview on real photographs: the contact sheet read back, each face's box and landmarks where the JSON
// lines put them, in the colour of its verdict, the photo itself under them, and an unreadable input shown as such.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "apps/faces/faces_preview.h"
#include "common/test_util.h"
#include "infer/infer_test_util.h"
#include "kiln/apps/faces.h"

namespace kiln {
namespace {

std::vector<nlohmann::json> json_lines_read(const std::string& path) {
  std::vector<nlohmann::json> records;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) records.push_back(nlohmann::json::parse(line));
  return records;
}

ImageBuffer png_read(const std::string& path) {
  auto image = image_decode_file(path, DecodeOptions{.channels = 3});
  EXPECT_TRUE(image.is_ok()) << image.status().message();
  return image.is_ok() ? std::move(image).value() : ImageBuffer{};
}

Rgb pixel_at(const ImageBuffer& image, int32_t x, int32_t y) {
  const uint8_t* p = &image.pixels[(static_cast<size_t>(y) * image.width + x) * 3];
  return {p[0], p[1], p[2]};
}

std::string rgb_text(Rgb c) {
  return std::to_string(c.r) + "," + std::to_string(c.g) + "," + std::to_string(c.b);
}

class FacesPreview : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<std::string>& photos = test::photo_paths();  // astronaut, Grace Hopper
    again = dir.file("astronaut_again.png");
    std::filesystem::copy_file(photos[0], again);
    broken = dir.file("broken.jpg");
    test::write_text_file(broken, "not an image");
    inputs = {photos[0], photos[1], again, broken};
  }

  FacesJobConfig config() const {
    FacesJobConfig c;
    c.output = dir.file("faces.h5");
    c.jsonl = dir.file("faces.jsonl");
    c.preview = dir.file("sheet.png");
    c.dedup = 0.7;
    c.face.thresholds.min_sharpness = 90;  // Grace Hopper's face passes, the astronaut's (84.5) does not
    c.exec.mode = ExecMode::kCpu;
    c.exec.threads = 2;
    return c;
  }

  test::TempDir dir;
  std::string again;
  std::string broken;
  std::vector<std::string> inputs;
};

TEST_F(FacesPreview, BoxesLandmarksAndVerdictsSitWhereTheRecordsSay) {
  test::packaged_model_require("blazeface-back");
  const FacesJobConfig c = config();
  auto summary = faces_job_run(c, ImageInputs{inputs, {}});
  ASSERT_TRUE(summary.is_ok()) << summary.status().message();
  const std::vector<nlohmann::json> records = json_lines_read(c.jsonl);
  ASSERT_EQ(records.size(), 4u);  // three faces and the unreadable file

  // The sheet the job wrote is the one these records and inputs draw, whose layout is returned.
  auto batches = ImageBatches::make(ImageInputs{inputs, {}});
  ASSERT_TRUE(batches.is_ok());
  auto cells = faces_preview_write(dir.file("again.png"), records, batches.value(), c.preview_images,
                                   DecodeOptions{.channels = 3});
  ASSERT_TRUE(cells.is_ok()) << cells.status().message();
  EXPECT_EQ(test::read_file_bytes(c.preview), test::read_file_bytes(dir.file("again.png")));
  const ImageBuffer sheet = png_read(c.preview);
  ASSERT_EQ(cells->size(), 4u);
  // 4 columns of 280 + 10 gaps; one row of 210 + 4 + 2 caption lines of 14 + 10 under the 30-pixel title.
  EXPECT_EQ(sheet.width, 4 * 290 + 10);
  EXPECT_EQ(sheet.height, 30 + 210 + 4 + 2 * 14 + 10);

  const Rgb verdicts[] = {ink::kBad, ink::kGood, ink::kRepeat};  // rejected, kept, duplicate of row 0
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json& face = records[static_cast<size_t>(i)];
    const FacesPreviewCell& cell = (*cells)[static_cast<size_t>(i)];
    ASSERT_EQ(face.at("image_index").get<int64_t>(), i);
    ASSERT_TRUE(cell.readable);
    const SheetPlacement& at = cell.placement;
    const auto& b = face.at("bbox");
    const double mid_x = (b[0].get<double>() + b[2].get<double>()) / 2;
    const double mid_y = (b[1].get<double>() + b[3].get<double>()) / 2;
    // The box's four edges, in the verdict's ink.
    for (const auto& [x, y] : {std::pair{at.canvas_x(mid_x), at.canvas_y(b[1].get<double>())},
                               std::pair{at.canvas_x(mid_x), at.canvas_y(b[3].get<double>()) - 1},
                               std::pair{at.canvas_x(b[0].get<double>()), at.canvas_y(mid_y)},
                               std::pair{at.canvas_x(b[2].get<double>()) - 1, at.canvas_y(mid_y)}}) {
      EXPECT_EQ(pixel_at(sheet, x, y), verdicts[i]) << "face " << i << " at " << x << "," << y << ": "
                                                    << rgb_text(pixel_at(sheet, x, y));
    }
    // Each landmark a dot.
    const auto& marks = face.at("landmarks");
    ASSERT_EQ(marks.size(), 6u);
    for (const auto& mark : marks) {
      const int32_t x = at.canvas_x(mark[0].get<double>());
      const int32_t y = at.canvas_y(mark[1].get<double>());
      EXPECT_EQ(pixel_at(sheet, x, y), ink::kMark) << "face " << i << " landmark at " << x << "," << y;
    }
    Rgb ink_seen;
    face_verdict(face, 1, &ink_seen);
    EXPECT_EQ(ink_seen, verdicts[i]);
  }
  // The photo under the drawing: a 9 x 9 patch of the sheet against the same area of the photo, shrunk.
  const std::vector<ImageBuffer> photos = test::photos_decode();
  const SheetPlacement& at = (*cells)[1].placement;
  EXPECT_NEAR(at.scale, 210.0 / photos[1].height, 1e-9);
  for (const auto& [px, py] : {std::pair{40, 40}, std::pair{400, 500}}) {
    double sheet_sum = 0;
    double photo_sum = 0;
    for (int dy = -4; dy <= 4; ++dy) {
      for (int dx = -4; dx <= 4; ++dx) {
        const Rgb s = pixel_at(sheet, at.canvas_x(px) + dx, at.canvas_y(py) + dy);
        sheet_sum += s.r + s.g + s.b;
      }
    }
    const int32_t reach = static_cast<int32_t>(std::lround(4.5 / at.scale));
    int64_t n = 0;
    for (int y = py - reach; y < py + reach; ++y) {
      for (int x = px - reach; x < px + reach; ++x, ++n) {
        const Rgb p = pixel_at(photos[1], x, y);
        photo_sum += p.r + p.g + p.b;
      }
    }
    EXPECT_NEAR(sheet_sum / 81, photo_sum / static_cast<double>(n), 12) << "at " << px << "," << py;
  }
  // The unreadable file: a grey box.
  EXPECT_FALSE((*cells)[3].readable);
  EXPECT_EQ(pixel_at(sheet, 3 * 290 + 10 + 5, 30 + 5), ink::kEmpty);
}

TEST_F(FacesPreview, AskedForMoreImagesThanThereAreDrawsThoseThere) {
  auto batches = ImageBatches::make(ImageInputs{{broken}, {}});
  ASSERT_TRUE(batches.is_ok());
  auto cells = faces_preview_write(dir.file("one.png"), {}, batches.value(), 24, DecodeOptions{.channels = 3});
  ASSERT_TRUE(cells.is_ok()) << cells.status().message();
  const ImageBuffer sheet = png_read(dir.file("one.png"));
  EXPECT_EQ(sheet.width, 290 + 10);
  EXPECT_EQ(pixel_at(sheet, 10 + 140, 30 + 20), ink::kEmpty);
}

}  // namespace
}  // namespace kiln
