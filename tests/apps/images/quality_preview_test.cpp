// kiln quality --preview's choice of images: evenly spaced ranks by score, best first, ties in input order.
#include <gtest/gtest.h>

#include "apps/images/quality_preview.h"

namespace kiln {
namespace {

std::vector<QualityPreviewEntry> entries_scored(const std::vector<float>& scores) {
  std::vector<QualityPreviewEntry> entries;
  for (size_t i = 0; i < scores.size(); ++i) entries.push_back({.index = static_cast<int64_t>(i), .score = scores[i]});
  return entries;
}

std::vector<int64_t> picked_indexes(const std::vector<QualityPreviewCell>& cells) {
  std::vector<int64_t> indexes;
  for (const auto& cell : cells) indexes.push_back(cell.entry.index);
  return indexes;
}

TEST(QualityPreviewPick, EvenlySpacedRanksFromTheBestToTheWorst) {
  // Scores 0.0, 0.1, ..., 0.9 in input order: rank r is index 9 - r.
  std::vector<float> scores;
  for (int i = 0; i < 10; ++i) scores.push_back(0.1f * static_cast<float>(i));
  const auto cells = quality_preview_pick(entries_scored(scores), 4);
  EXPECT_EQ(picked_indexes(cells), (std::vector<int64_t>{9, 6, 3, 0}));
  EXPECT_EQ(cells.front().rank, 0);
  EXPECT_EQ(cells.back().rank, 9);
}

TEST(QualityPreviewPick, AllWhenThereAreNoMoreAndTiesKeepInputOrder) {
  const auto cells = quality_preview_pick(entries_scored({0.5f, 0.9f, 0.5f, 0.1f}), 24);
  EXPECT_EQ(picked_indexes(cells), (std::vector<int64_t>{1, 0, 2, 3}));
  EXPECT_EQ(quality_preview_pick(entries_scored({0.3f, 0.7f}), 1).front().entry.index, 1);
  EXPECT_TRUE(quality_preview_pick({}, 5).empty());
}

}  // namespace
}  // namespace kiln
