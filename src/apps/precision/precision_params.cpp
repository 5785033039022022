// The declared settings of the precision job (kiln/apps/precision.h), for the CLI and Python alike.
#include <string>

#include "kiln/apps/precision.h"
#include "kiln/enum_names.h"

namespace kiln {

namespace {

using C = ModelPrecisionConfig;

constexpr EnumName<CalibrationMethod> kMethods[] = {{CalibrationMethod::kMinMax, "minmax"},
                                                    {CalibrationMethod::kPercentile, "percentile"}};
constexpr EnumName<bool> kActivations[] = {{false, "uint8"}, {true, "int8"}};  // activations_int8

void common_add(ParamTable<C>& t) {
  t.add({.name = "output", .help = "The new .onnx file", .required = true},
        [](C& c) -> std::string& { return c.output; });
  t.add({.name = "max_frames",
         .help = "At most this many frames, spread evenly over each video",
         .min = 1,
         .max = 100000},
        [](C& c) -> int64_t& { return c.max_frames; });
  t.add({.name = "threads",
         .help = "CPU provider intra-op threads for both models (0 = all cores)",
         .min = 0,
         .max = 1024},
        [](C& c) -> int32_t& { return c.compare.threads; });
  t.add({.name = "seconds", .help = "Timing: at least this long per model", .min = 0, .max = 600},
        [](C& c) -> double& { return c.compare.seconds; });
}

}  // namespace

const ParamTable<ModelPrecisionConfig>& model_convert_params() {
  static const ParamTable<C> table = [] {
    ParamTable<C> t;
    common_add(t);
    t.add({.name = "min_elements",
           .help = "Smaller float initializers stay float32",
           .min = 1,
           .max = static_cast<double>(int64_t{1} << 40)},
          [](C& c) -> int64_t& { return c.fp16.min_elements; });
    return t;
  }();
  return table;
}

const ParamTable<ModelPrecisionConfig>& model_quantize_params() {
  static const ParamTable<C> table = [] {
    ParamTable<C> t;
    common_add(t);
    t.add_choice(
        {.name = "method", .help = "Activation ranges: minmax, or percentile of each tensor's histogram"},
        [](C& c) -> CalibrationMethod& { return c.quantize.method; }, kMethods, "method");
    t.add({.name = "percentile", .help = "With method percentile: the share of values kept", .min = 50, .max = 100},
          [](C& c) -> double& { return c.quantize.percentile; });
    t.add_choice(
        {.name = "activations", .help = "Activation type: uint8 (x86 kernels) or int8"},
        [](C& c) -> bool& { return c.quantize.activations_int8; }, kActivations, "activations");
    t.add_custom(
        {.name = "per_tensor",
         .type = ParamType::kBool,
         .help = "One weight scale per tensor instead of per output channel"},
        [](C& c, const ParamValue& v) {
          c.quantize.per_channel = !std::get<bool>(v);
          return Status::ok();
        },
        [](const C& c) -> ParamValue { return !c.quantize.per_channel; });
    t.add({.name = "reduce_range", .help = "7-bit weights, for x86 CPUs without VNNI"},
          [](C& c) -> bool& { return c.quantize.reduce_range; });
    t.add({.name = "quantize_head",
           .help = "Quantize the output head too (the nodes from the last layer with weights to the outputs, kept in "
                   "float32 otherwise: a mask's decision boundary lies in its logits)"},
          [](C& c) -> bool& { return c.quantize.quantize_head; });
    return t;
  }();
  return table;
}

}  // namespace kiln
