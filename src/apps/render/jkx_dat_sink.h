// The jkx-dat output: Jiang, Kelly and Xiu's image files, raw uint8 {prefix}_{year}_images.dat of shape (N, H, W)
// (np.memmap(path, dtype=np.uint8, mode='r').reshape(-1, H, W) reads them), one per year of the windows' last day,
// each with {prefix}_{year}_labels.csv and the same table as {prefix}_{year}_labels.feather (Feather V1, which
// pandas.read_feather reads) beside it (Date, StockID, MarketCap, Ret_5d, Ret_20d, Ret_60d; one row per image, in the
// same order). A panel's images are grouped by year, then by symbol and date.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/render/image_sink.h"
#include "apps/render/image_table.h"

namespace kiln {

// Each year is written to .part files and renamed to its final names once its last image is durable, so a killed
// run leaves whole years only; resume keeps the finished years and redoes the first unfinished one.
// `labels`: one row per image of the job, in job order, the years of end_date never decreasing (StockID = the
// image's symbol, MarketCap empty where NaN).
Result<std::unique_ptr<ImageSink>> jkx_dat_sink_create(const OutputSpec& spec, ImageTable labels);

}  // namespace kiln
