// The images application from Python: _kiln.quality and _kiln.preprocess run the `kiln quality` / `kiln
// preprocess` jobs on numpy images or tensors of other libraries (DLPack; in place) or on image files (paths,
// folders, @lists). CUDA tensors stay on the device: preprocess returns a kiln.DeviceArray, quality the metrics.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "dlpack_arrays.h"
#include "errors.h"
#include "image_input.h"
#include "kiln/apps/images.h"
#include "py_jobs.h"

namespace kiln::py {

namespace {

namespace pyb = pybind11;

// Paths (a path, or a list of them), numpy images or a DLPack tensor; `arrays` or `tensor` keeps the images alive.
ImageInputs inputs_from(pyb::handle obj, ImageListInput* arrays, DlpackImages* tensor) {
  ImageInputs inputs;
  if (is_path(obj)) {
    inputs.paths.push_back(pyb::str(obj).cast<std::string>());
    return inputs;
  }
  if ((pyb::isinstance<pyb::list>(obj) || pyb::isinstance<pyb::tuple>(obj)) && pyb::len(obj) > 0 &&
      is_path(pyb::reinterpret_borrow<pyb::sequence>(obj)[0])) {
    for (pyb::handle item : obj) {
      if (!is_path(item)) raise_value_error("images: a list of paths must hold only paths");
      inputs.paths.push_back(pyb::str(item).cast<std::string>());
    }
    return inputs;
  }
  if (dlpack_offered(obj)) {
    *tensor = dlpack_images(obj);
    inputs.images = tensor->batch();
    return inputs;
  }
  *arrays = images_from_object(obj);
  inputs.images = arrays->batch();
  return inputs;
}

// Bytes of one preprocessed image of `channels` channels.
size_t preprocess_item_bytes(const PreprocessJobConfig& config, int32_t channels) {
  return static_cast<size_t>(channels) * static_cast<size_t>(std::max(config.width, 0)) *
         static_cast<size_t>(std::max(config.height, 0)) * pixel_type_size(config.dtype);
}

// Runs `call` on CUDA images on the CUDA backend, on the stream their producer made them ready on, with the GIL
// released; `unsupported` is the error where the backend does not take the call.
void run_on_device_images(const DlpackImages& images, const OpCall& call, const std::string& unsupported) {
  status_check(op_validate(call));
  if (!images.backend->supports(call)) raise_value_error(unsupported);
  Status st;
  {
    pyb::gil_scoped_release release;
    st = images.backend->run(call, RunContext{nullptr, images.stream.get(), nullptr});
  }
  status_check(st);
}

// CUDA images (a tensor through DLPack) -> a kiln.DeviceArray: the fused preprocess on the device, on the stream the
// tensor's producer made it ready on, nothing through the host.
pyb::object preprocess_on_device(const DlpackImages& images, const PreprocessJobConfig& config) {
  if (config.exec.mode == ExecMode::kCpu) {
    raise_value_error("preprocess: mode='cpu' with CUDA images: copy them to the host first");
  }
  if (!config.output.empty()) raise_value_error("preprocess: output= is for host images; CUDA images give an array");
  const auto n = static_cast<int64_t>(images.views.size());
  const int32_t channels = n > 0 ? images.views[0].channels : 3;
  const std::vector<int64_t> shape = config.layout == Layout::kCHW
                                         ? std::vector<int64_t>{n, channels, config.height, config.width}
                                         : std::vector<int64_t>{n, config.height, config.width, channels};
  pyb::object out = device_array_make(shape, config.dtype);
  const auto data = device_array_data(out);
  const size_t item_bytes = preprocess_item_bytes(config, channels);
  std::vector<ImageView> items;
  for (int64_t i = 0; i < n; ++i) {
    items.push_back(image_view_packed(static_cast<uint8_t*>(data->block.data()) + static_cast<size_t>(i) * item_bytes,
                                      config.width, config.height, channels, config.dtype, config.layout));
  }
  const OpCall call{OpKind::kPreprocess, &config.params, images.batch(),
                    VarShapeBatchView{items.data(), n, MemorySpace::kDevice}, nullptr};
  run_on_device_images(images, call, "preprocess: the CUDA backend does not run these settings on device images");
  return out;
}

template <typename Run>
auto run_released(Run&& run) {
  pyb::gil_scoped_release release;
  return run();
}

// The result of kiln.quality: a column per metric (NaN where an input failed), pass/fail with reasons, errors, names.
pyb::dict quality_dict(const std::vector<QualityRecord>& records) {
  const auto n = static_cast<pyb::ssize_t>(records.size());
  std::array<pyb::array_t<double>, 5> columns{pyb::array_t<double>(n), pyb::array_t<double>(n), pyb::array_t<double>(n),
                                             pyb::array_t<double>(n), pyb::array_t<double>(n)};
  pyb::array_t<bool> passed(n);
  pyb::list reasons, errors, names;
  for (pyb::ssize_t i = 0; i < n; ++i) {
    const QualityRecord& r = records[static_cast<size_t>(i)];
    const QualityMetrics& m = r.metrics;
    const double values[5] = {m.blur, m.brightness, m.contrast, m.sharpness, m.score};
    for (size_t k = 0; k < 5; ++k) columns[k].mutable_at(i) = r.ok ? values[k] : std::nan("");
    passed.mutable_at(i) = r.ok && r.verdict.pass;
    reasons.append(pyb::cast(r.verdict.reasons));
    errors.append(r.ok ? pyb::object(pyb::none()) : pyb::object(pyb::str(r.error)));
    names.append(r.name);
  }
  pyb::dict out;
  const char* column_names[5] = {"blur", "brightness", "contrast", "sharpness", "score"};
  for (size_t k = 0; k < 5; ++k) out[column_names[k]] = columns[k];
  out["passed"] = passed;
  out["reasons"] = reasons;
  out["errors"] = errors;
  out["names"] = names;
  return out;
}

// CUDA images (a tensor through DLPack): measured where they are, on the stream their producer made them ready on;
// only the metrics come to the host, judged by the thresholds as the job judges them.
pyb::dict quality_on_device(const DlpackImages& images, const QualityJobConfig& config) {
  if (config.exec.mode == ExecMode::kCpu) {
    raise_value_error("quality: mode='cpu' with CUDA images: copy them to the host first");
  }
  if (!config.json.empty() || !config.filter_to.empty() || !config.preview.empty() || config.resume) {
    raise_value_error("quality: json=, filter_to=, preview= and resume= are for image files; CUDA images give the "
                      "metrics only");
  }
  QualityParams params;
  params.bgr = config.bgr;
  std::vector<QualityMetrics> metrics(images.views.size());
  const OpCall call{OpKind::kQuality, &params, images.batch(), {}, metrics.data()};
  run_on_device_images(images, call, "quality: the CUDA backend does not measure these images on the device");
  std::vector<QualityRecord> records(metrics.size());
  for (size_t i = 0; i < metrics.size(); ++i) {
    QualityRecord& r = records[i];
    r.name = "#" + std::to_string(i);
    r.ok = true;
    r.backend = images.backend->name();
    r.metrics = metrics[i];
    r.verdict = quality_judge(metrics[i], config.thresholds);
  }
  pyb::dict out = quality_dict(records);
  out["backend"] = images.backend->name();
  out["copied"] = 0;
  return out;
}

pyb::dict quality(pyb::handle images, const pyb::kwargs& kwargs) {
  QualityJobConfig config;
  settings_apply(quality_job_params(), &config, &config.exec, OpKind::kQuality, kwargs, "quality");
  ImageListInput arrays;
  DlpackImages tensor;
  const ImageInputs inputs = inputs_from(images, &arrays, &tensor);
  if (inputs.images.space == MemorySpace::kDevice) return quality_on_device(tensor, config);
  std::vector<QualityRecord> records;
  JobEvents<QualityRecord> events;
  events.record = [&](const QualityRecord& r) { records.push_back(r); };
  auto result = run_released([&] { return quality_job_run(config, inputs, events); });
  status_check(result.status());
  const QualityJobSummary& s = result.value();
  pyb::dict out = quality_dict(records);
  out["backend"] = s.backend;
  out["copied"] = s.copied;
  if (!s.fallback_events.empty()) out["fallback"] = s.fallback_events.front();
  return out;
}

// numpy images -> the (N, ...) array; paths -> a summary dict (with the array unless `output` was written).
pyb::object preprocess(pyb::handle images, const pyb::kwargs& kwargs) {
  PreprocessJobConfig config;
  settings_apply(preprocess_job_params(), &config, &config.exec, OpKind::kPreprocess, kwargs, "preprocess");
  ImageListInput arrays;
  DlpackImages tensor;
  const ImageInputs inputs = inputs_from(images, &arrays, &tensor);
  if (inputs.images.space == MemorySpace::kDevice) return preprocess_on_device(tensor, config);
  const bool in_memory = inputs.paths.empty();
  const pyb::dtype dtype = config.dtype == PixelType::kF16 ? pyb::dtype("float16") : pyb::dtype::of<float>();
  const int32_t channels = in_memory && inputs.images.count > 0 ? inputs.images[0].channels : 3;
  const std::vector<pyb::ssize_t> item = config.layout == Layout::kCHW
                                             ? std::vector<pyb::ssize_t>{channels, config.height, config.width}
                                             : std::vector<pyb::ssize_t>{config.height, config.width, channels};
  const size_t item_bytes = preprocess_item_bytes(config, channels);
  // Numpy images are written straight into the result; decoded files (count unknown ahead) each into their own
  // buffer, so the places already handed out stay valid while more are added.
  pyb::array out;
  std::vector<std::unique_ptr<uint8_t[]>> buffers;
  TensorMemory memory;
  if (in_memory) {
    std::vector<pyb::ssize_t> shape{inputs.images.count};
    shape.insert(shape.end(), item.begin(), item.end());
    out = pyb::array(dtype, shape);
    auto* base = static_cast<uint8_t*>(out.mutable_data());
    memory = [base, item_bytes](int64_t i) -> void* { return base + static_cast<size_t>(i) * item_bytes; };
  } else {
    memory = [&buffers, item_bytes](int64_t i) -> void* {
      if (static_cast<size_t>(i) >= buffers.size()) buffers.resize(static_cast<size_t>(i) + 1);
      if (!buffers[static_cast<size_t>(i)]) buffers[static_cast<size_t>(i)] = std::make_unique<uint8_t[]>(item_bytes);
      return buffers[static_cast<size_t>(i)].get();
    };
  }
  auto result = run_released([&] { return preprocess_job_run(config, inputs, &memory); });
  status_check(result.status());
  if (in_memory) return out;
  const PreprocessJobSummary& s = result.value();
  pyb::dict d;
  d["written"] = s.written;
  d["unreadable"] = s.unreadable;
  d["names"] = s.names;
  d["backend"] = s.backend;
  d["seconds"] = s.seconds;
  if (config.output.empty()) {
    std::vector<pyb::ssize_t> shape{s.written};
    shape.insert(shape.end(), item.begin(), item.end());
    pyb::array array(dtype, shape);
    for (int64_t i = 0; i < s.written; ++i) {
      std::memcpy(static_cast<uint8_t*>(array.mutable_data()) + static_cast<size_t>(i) * item_bytes,
                  buffers[static_cast<size_t>(i)].get(), item_bytes);
    }
    d["array"] = array;
  } else {
    d["output"] = config.output;
  }
  return d;
}

}  // namespace

void image_ops_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  m.def("quality", &quality, "images"_a,
        "Image-quality metrics: blur (Laplacian variance), brightness, contrast, sharpness and score, with pass/fail\n"
        "against the thresholds, of uint8 images (an array, a stack or a list) or of image files (a path, a list\n"
        "of paths, a folder, '@list.txt'). Returns a dict of arrays plus 'passed', 'reasons', 'errors', 'names'.\n"
        "CUDA images (a torch CUDA tensor, a kiln.DeviceArray: anything with __dlpack__) are measured in place on\n"
        "the device; only the metrics come back.");
  m.def("preprocess", &preprocess, "images"_a,
        "Fused resize + normalize into an (N, C, H, W) or (N, H, W, C) float32/float16 tensor: of uint8 HWC\n"
        "images (returns the array) or of image files (returns a summary; with output= the tensor goes to a\n"
        ".npy/.h5 file, else to summary['array']). CUDA images (a torch CUDA tensor, a kiln.DeviceArray: anything\n"
        "with __dlpack__) are read in place and give a kiln.DeviceArray, on the device throughout.");
}

}  // namespace kiln::py
