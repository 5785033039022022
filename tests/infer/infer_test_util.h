// Real photographs and packaged models for the inference tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/codec.h"
#include "kiln/infer.h"

namespace kiln::test {

// astronaut.png (python3-skimage) and grace_hopper.jpg (python-matplotlib-data): one face each, two people.
const std::vector<std::string>& photo_paths();
std::vector<ImageBuffer> photos_decode();

// The packaged model, or a failed ASSERT naming what is missing.
PackagedModel packaged_model_require(const std::string& name);

// The model's input for `images`, preprocessed on the CPU as its catalog entry says; *shape receives N x ...
std::vector<float> model_input_make(const PackagedModel& model, const std::vector<ImageBuffer>& images,
                                    std::vector<int64_t>* shape);

InferOptions cpu_infer_options();

// kiln's registry found a usable CUDA device.
bool cuda_device_present();

// The CUDA provider convolves in TF32 (its default: 10-bit mantissas) and sums in other orders, so its outputs agree
// with the CPU provider's in direction and size, not to the last bits: each of the `rows` rows has cosine >= 0.999
// and relative L2 error <= 2 % against `want`'s.
void expect_rows_close(const Tensor& got, const Tensor& want, int64_t rows);

// Every packaged model, by name.
inline constexpr const char* kPackagedModelNames[] = {"selfie", "blazeface-front", "blazeface-back", "fr-detect",
                                                      "fr-embed"};

// An open session, or a failed EXPECT with the reason and nullptr.
std::unique_ptr<InferSession> session_open(const std::string& path, const InferOptions& options = cpu_infer_options());

// The embedder as its npm package ships it: batch dimension fixed at 1.
std::string fixed_batch_embedder_path();

}  // namespace kiln::test
