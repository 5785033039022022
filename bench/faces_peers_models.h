// The two models alone, as kiln's face pipeline runs them (ONNX Runtime, kiln's session options, the detector on
// batches of photos and the embedder on the faces of each batch in chunks of the batch size). On one image at a time,
// at its better thread count, it is the rate no pipeline of these models can pass (faces_peers' bound of batch 1).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <opencv2/core.hpp>

#include "kiln/apps/faces.h"
#include "kiln/infer.h"

namespace kiln::bench {

struct FaceModelsOnly;

// Opens both sessions and prepares every input outside any timing: each photo letterboxed to the detector's input,
// each face of `faces` (kiln's, per photo) as an aligned-size crop of its box, both in the models' float layout.
std::shared_ptr<FaceModelsOnly> face_models_only_open(const PackagedModel& detector, const PackagedModel& embedder,
                                                      const std::vector<cv::Mat>& rgb,
                                                      const std::vector<std::vector<Face>>& faces, int threads,
                                                      int64_t batch);
// One pass over every photo; returns the faces embedded.
int64_t face_models_only_pass(FaceModelsOnly& models);
// One pass of each copy at once, each on a thread of its own (opened on one thread each: the models' work with every
// core busy, the most a pipeline that runs several batches at once can reach); returns the faces of all passes.
int64_t face_models_concurrent_pass(const std::vector<std::shared_ptr<FaceModelsOnly>>& copies);

}  // namespace kiln::bench
