// Lower-precision copies of ONNX models, and how far they drift from the original: fp16 weights (half the file,
// fp32 inputs and outputs, a drop-in replacement) and static int8 quantization in QDQ form (QuantizeLinear /
// DequantizeLinear pairs that ONNX Runtime fuses into integer kernels: QLinearConv, QLinearAdd, ...), calibrated on
// real inputs. Built with Debian's libonnx (KILN_HAS_ONNX); the comparison runs both models on ONNX Runtime.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/infer.h"
#include "kiln/status.h"

namespace kiln {

// An ONNX model in memory: its serialized bytes.
using ModelBytes = std::vector<uint8_t>;

// ---- fp16 -----------------------------------------------------------------------------------------------------
struct ModelFp16Options {
  // Initializers with fewer elements stay float32 (scalars, shapes, Resize scales: no size to gain).
  int64_t min_elements = 16;
};

struct ModelFp16Report {
  int64_t converted = 0;        // float initializers now stored as float16 (each followed by a Cast to float)
  int64_t kept_fp32 = 0;        // float initializers left as they were (small, or values beyond float16's range)
  int64_t bytes_converted = 0;  // their float32 size before
};

// fp16 storage: every float initializer of at least min_elements becomes float16 followed by a Cast back to
// float32, so every op still computes in float32 and inputs and outputs keep their types. (ONNX Runtime's CPU
// provider has almost no fp16 kernels on x86; it folds the Casts at load and runs at fp32 speed.)
Result<ModelBytes> model_fp16_convert(const ModelBytes& model, const ModelFp16Options& options,
                                      ModelFp16Report* report);

// ---- int8 -----------------------------------------------------------------------------------------------------
enum class CalibrationMethod : uint8_t { kMinMax = 0, kPercentile };

struct ModelQuantizeOptions {
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.999;  // kPercentile: the share of each tensor's values kept inside its range
  bool per_channel = true;     // int8 weight scales per output channel (needs opset 13: older models are converted)
  // 7-bit weights, for x86 CPUs without AVX512-VNNI / AVX-VNNI (u8 x s8 products then cannot saturate).
  bool reduce_range = false;
  bool activations_int8 = false;  // int8 activations instead of uint8 (uint8 is what every x86 kernel takes)
  std::vector<std::string> exclude_nodes;  // nodes (by name) left in float32
  // The output head (from each output back to the last layer with weights, see model_int8_quantize) in int8 too.
  bool quantize_head = false;
  int32_t threads = 0;                     // ONNX Runtime threads while calibrating; 0 = all cores
};

struct ModelQuantizeReport {
  int64_t quantized_nodes = 0;   // nodes that run on integers after ONNX Runtime's QDQ fusion
  int64_t float_nodes = 0;       // nodes left computing in float32 (between a DequantizeLinear and a QuantizeLinear)
  int64_t quantize_nodes = 0;    // QuantizeLinear nodes added
  int64_t dequantize_nodes = 0;  // DequantizeLinear nodes added
  int64_t weights = 0;           // int8 weight tensors
  int64_t folded = 0;            // float rewrites first: Conv + Add -> Conv bias, Relu(x) - Relu(x - 6) -> Clip, ...
  int64_t removed_activations = 0;  // Relu / Clip absorbed by the range of the QuantizeLinear before them
  int64_t head_nodes = 0;           // nodes of the output head left in float32
  int64_t calibration_items = 0;
  int64_t opset_from = 0, opset_to = 0;
  std::vector<std::string> float_op_types;  // op types left in float32, e.g. "PRelu", "Sub"
};

// Static QDQ quantization (what onnxruntime.quantization.quantize_static does with QuantFormat.QDQ): activations
// asymmetric uint8 (or int8) with ranges from running the model on `calibration` (each a batch-1 tensor of the
// model's first input: min/max, or a percentile of each tensor's histogram); weights of Conv, Gemm and MatMul
// symmetric int8, per output channel; Conv/Gemm biases int32 at input scale x weight scale. Add, Mul, Concat,
// Sigmoid, AveragePool, GlobalAveragePool, LeakyRelu and Softmax are quantized for ONNX Runtime's QLinear kernels;
// MaxPool, Resize, Reshape, Transpose, Flatten, Squeeze and Unsqueeze keep their input's scale so that their Q/DQ
// pairs drop out. Other ops stay float32 between a DequantizeLinear and a QuantizeLinear.
Result<ModelBytes> model_int8_quantize(const ModelBytes& model, const std::vector<Tensor>& calibration,
                                       const ModelQuantizeOptions& options, ModelQuantizeReport* report);

// ---- comparing a model with its original ------------------------------------------------------------------------
struct ModelCompareOptions {
  int32_t threads = 0;     // CPU provider intra-op threads, the same for both; 0 = all cores
  double seconds = 1.0;    // timing: at least this long per model (and at least one pass over the inputs)
  float mask_threshold = 0.5f;
};

struct ModelCompareReport {
  std::string output;              // the first output's name, which is compared
  std::vector<int64_t> shape;      // its shape for one item
  int64_t items = 0;
  double max_abs_diff = 0;
  double mean_abs_diff = 0;
  // A mask output (one channel, N x 1 x H x W or N x H x W; values in [0, 1] or logits, sigmoid then): IoU of
  // the masks at mask_threshold per item, over the mask_items whose reference mask covers at least 1% of the
  // pixels (IoU says nothing about an empty one), and the share of all pixels of all items decided differently.
  bool mask = false;
  double mask_iou_mean = 0;
  double mask_iou_min = 0;
  int64_t mask_items = 0;
  double mask_pixels_differ = 0;
  // An embedding output (N x D): cosine similarity per item.
  bool embedding = false;
  double cosine_mean = 0;
  double cosine_min = 0;
  // CPU provider, batch 1, the same threads: milliseconds per inference (median), and reference / candidate.
  double reference_ms = 0;
  double candidate_ms = 0;
  double speedup = 0;
  int32_t threads = 0;
  std::string json() const;
};

// Runs `reference` and `candidate` (both ONNX models with the same first input and output) on every input on
// ONNX Runtime's CPU provider, compares the first outputs and times both.
Result<ModelCompareReport> model_compare(const ModelBytes& reference, const ModelBytes& candidate,
                                         const std::vector<Tensor>& inputs, const ModelCompareOptions& options);

// ---- checking -------------------------------------------------------------------------------------------------
// InvalidArgument starting with `label` when the bytes are not a complete, valid ONNX model (empty, truncated,
// corrupt, failing ONNX's checker); UnsupportedFormat when its weights are kept in external data files.
Status model_bytes_check(const ModelBytes& model, const std::string& label);

}  // namespace kiln
