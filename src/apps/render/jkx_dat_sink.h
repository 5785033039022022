// The jkx-dat output: Jiang, Kelly and Xiu's image files, raw uint8 {prefix}_{year}_images.dat of shape (N, H, W)
// (np.memmap(path, dtype=np.uint8, mode='r').reshape(-1, H, W) reads them), one per year of the windows' last day,
// each with {prefix}_{year}_labels.csv beside it (Date, StockID, MarketCap, Ret_5d, Ret_20d, Ret_60d; one row per
// image, in the same order).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/render/image_sink.h"

namespace kiln {

// One row per image of the job, in job order.
struct JkxLabels {
  std::string stock_id;
  std::vector<int32_t> end_dates;  // yyyymmdd of each window's last day, never decreasing
  std::vector<double> ret_5d;      // close 5 days after the last day / its close - 1; NaN past the series' end
  std::vector<double> ret_20d;
  std::vector<double> ret_60d;
};

// Each year is written to .part files and renamed to its final names once its last image is durable, so a killed
// run leaves whole years only; resume keeps the finished years and redoes the first unfinished one.
Result<std::unique_ptr<ImageSink>> jkx_dat_sink_create(const OutputSpec& spec, JkxLabels labels);

}  // namespace kiln
