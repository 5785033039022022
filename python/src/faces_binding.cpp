// kiln.faces from Python: _kiln.FaceService (the face analyzer behind detect_and_embed, its batch form and, through
// submit(), the asyncio forms: the work runs on the service's own thread and the result comes back through a
// callback), enhance_image_for_face_detection and face_quality. Images are bytes, paths or numpy RGB arrays; the
// GIL is released while kiln decodes and analyzes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "apps/faces/face_geometry.h"
#include "apps/faces/face_prepare.h"
#include "bindings.h"
#include "core/thread_pool.h"
#include "errors.h"
#include "image_input.h"
#include "kiln/apps/faces.h"
#include "kiln/codec.h"
#include "kiln/image_ops.h"
#include "params_py.h"
#include "py_jobs.h"

namespace kiln::py {

namespace pyb = pybind11;

namespace {

// One image, owned, so that the work can run on another thread: encoded bytes, a path, or RGB pixels.
struct FaceInput {
  std::vector<uint8_t> encoded;
  std::string path;
  ImageBuffer pixels;
};

FaceInput face_input_from(pyb::handle obj, const std::string& what) {
  FaceInput input;
  if (pyb::isinstance<pyb::memoryview>(obj) && !obj.attr("c_contiguous").cast<bool>()) {
    // A strided view (a slice with a step): its bytes in order, not the memory under it read as if it were linear.
    const pyb::object packed = obj.attr("tobytes")();
    return face_input_from(packed, what);
  }
  if (pyb::isinstance<pyb::bytes>(obj) || pyb::isinstance<pyb::bytearray>(obj) ||
      pyb::isinstance<pyb::memoryview>(obj)) {
    const pyb::buffer_info info = pyb::reinterpret_borrow<pyb::buffer>(obj).request();
    const auto* data = static_cast<const uint8_t*>(info.ptr);
    input.encoded.assign(data, data + info.size * info.itemsize);
    return input;
  }
  if (is_path(obj)) {
    input.path = pyb::str(obj).cast<std::string>();
    return input;
  }
  const auto array = pyb::array_t<uint8_t, pyb::array::c_style>::ensure(obj);
  if (!array || pyb::array::ensure(obj).dtype().kind() != 'u' || pyb::array::ensure(obj).itemsize() != 1) {
    raise_value_error(what + ": expected bytes, a path or a uint8 numpy array (H, W, 3) RGB");
  }
  const pyb::ssize_t channels = array.ndim() == 3 ? array.shape(2) : 1;
  if ((array.ndim() != 2 && array.ndim() != 3) || channels < 1 || channels > 4) {
    raise_value_error(what + ": expected an (H, W), (H, W, 3) or (H, W, 4) array");
  }
  const ImageView view = image_view_packed(const_cast<uint8_t*>(array.data()), static_cast<int32_t>(array.shape(1)),
                                           static_cast<int32_t>(array.shape(0)), static_cast<int32_t>(channels),
                                           PixelType::kU8);
  auto rgb = image_convert_channels(view, 3);
  status_check(rgb.status());
  input.pixels = std::move(rgb).value();
  return input;
}

std::vector<FaceInput> face_inputs_from(pyb::handle images) {
  if (!pyb::isinstance<pyb::sequence>(images) || pyb::isinstance<pyb::str>(images) ||
      pyb::isinstance<pyb::bytes>(images)) {
    raise_value_error("images: expected a list of images (bytes, paths or numpy arrays)");
  }
  std::vector<FaceInput> inputs;
  size_t i = 0;
  for (pyb::handle item : images) inputs.push_back(face_input_from(item, "images[" + std::to_string(i++) + "]"));
  return inputs;
}

Status face_input_decode(FaceInput* input, int64_t max_pixels) {
  if (!input->pixels.empty()) return Status::ok();
  DecodeOptions options;
  options.channels = 3;
  options.max_pixels = max_pixels;
  auto decoded = input->path.empty() ? image_decode(input->encoded.data(), input->encoded.size(), options)
                                     : image_decode_file(input->path, options);
  KILN_TRY(decoded.status());
  input->pixels = std::move(decoded).value();
  input->encoded = {};
  return Status::ok();
}

// The results of one call: per input, its faces or why it could not be read.
struct FaceResults {
  std::vector<Status> status;
  std::vector<std::vector<Face>> faces;
};

pyb::dict face_to_python(const Face& f) {
  const float* b = f.detection.box;
  pyb::dict d;
  d["bbox"] = pyb::make_tuple(b[0], b[1], b[0] + b[2], b[1] + b[3]);  // the predecessor's x0, y0, x1, y1
  pyb::array_t<float> embedding(static_cast<pyb::ssize_t>(f.embedding.size()));
  std::copy(f.embedding.begin(), f.embedding.end(), embedding.mutable_data());
  d["embedding"] = embedding;
  d["det_score"] = f.detection.score;
  d["scale"] = f.scale;
  d["enhancement_scale"] = f.enhancement_scale;
  d["face_size"] = f.face_size;
  pyb::array_t<float> landmarks({static_cast<pyb::ssize_t>(f.detection.landmark_count), pyb::ssize_t{2}});
  for (int32_t k = 0; k < f.detection.landmark_count; ++k) {
    landmarks.mutable_at(k, 0) = f.detection.landmarks[k][0];
    landmarks.mutable_at(k, 1) = f.detection.landmarks[k][1];
  }
  d["landmarks"] = landmarks;
  pyb::dict quality;
  quality["blur"] = f.quality.blur;
  quality["brightness"] = f.quality.brightness;
  quality["contrast"] = f.quality.contrast;
  quality["sharpness"] = f.quality.sharpness;
  quality["overall_score"] = f.quality.score;
  d["quality"] = quality;
  pyb::dict pose;
  pose["yaw"] = f.pose.yaw;
  pose["pitch"] = f.pose.pitch;
  pose["roll"] = f.pose.roll;
  d["pose"] = pose;
  d["accepted"] = f.accepted;
  d["reasons"] = f.reasons;
  return d;
}

// Per input, a list of face dicts, or (return_exceptions) the KilnError instance of an unreadable one; otherwise
// the first unreadable input raises.
pyb::list results_to_python(const FaceResults& results, bool return_exceptions) {
  pyb::list out;
  for (size_t i = 0; i < results.faces.size(); ++i) {
    if (!results.status[i].is_ok()) {
      if (!return_exceptions) status_check(results.status[i]);
      out.append(status_exception(results.status[i]));
      continue;
    }
    pyb::list faces;
    for (const Face& f : results.faces[i]) faces.append(face_to_python(f));
    out.append(faces);
  }
  return out;
}

class FaceService {
 public:
  explicit FaceService(const pyb::kwargs& kwargs) {
    status_check(exec_settings_apply_env(&m_settings.exec, env_lookup_process));
    params_apply_kwargs(faces_call_params(), &m_settings, kwargs, "FaceService");
    auto stages = face_stage_modes(m_settings.exec.mode, env_lookup_process);
    status_check(stages.status());
    Result<std::unique_ptr<FaceAnalyzer>> analyzer = Status(Errc::kInvalidArgument, "");
    {
      pyb::gil_scoped_release release;
      analyzer = FaceAnalyzer::open(m_settings.face, m_settings.exec, stages.value());
    }
    status_check(analyzer.status());
    m_analyzer = std::move(analyzer).value();
    m_worker = std::thread([this] { worker_loop(); });
  }

  ~FaceService() { close(); }

  pyb::list detect_and_embed(const pyb::object& image) {
    std::vector<FaceInput> inputs;
    inputs.push_back(face_input_from(image, "image"));
    const FaceResults results = run_released(&inputs, 1);
    return results_to_python(results, false)[0];
  }

  pyb::list detect_and_embed_batch(const pyb::object& images, int64_t batch_size, bool return_exceptions) {
    std::vector<FaceInput> inputs = face_inputs_from(images);
    const FaceResults results = run_released(&inputs, batch_size);
    return results_to_python(results, return_exceptions);
  }

  // Runs on the service's thread; callback(results, None) or callback(None, exception) is called from there, with
  // the GIL, when the work is done. single: results is the face list of the one image, and its error is raised.
  void submit(const pyb::object& images, int64_t batch_size, bool single, bool return_exceptions,
              const pyb::object& callback) {
    Job job;
    if (single) {
      job.inputs.push_back(face_input_from(images, "image"));
    } else {
      job.inputs = face_inputs_from(images);
    }
    job.batch_size = batch_size;
    job.single = single;
    job.return_exceptions = return_exceptions;
    job.callback = std::make_unique<pyb::object>(callback);
    std::lock_guard<std::mutex> lock(m_queue_mutex);
    if (m_closing) raise_value_error("FaceService: closed");
    m_jobs.push_back(std::move(job));
    m_queue_cv.notify_one();
  }

  // Stops the service's thread; queued work is dropped. Called with the GIL held.
  void close() {
    {
      std::lock_guard<std::mutex> lock(m_queue_mutex);
      if (m_closing && !m_worker.joinable()) return;
      m_closing = true;
    }
    m_queue_cv.notify_all();
    if (m_worker.joinable()) {
      pyb::gil_scoped_release release;  // the thread may be waiting for the GIL to deliver a result
      m_worker.join();
    }
    m_jobs.clear();  // their callbacks are released with the GIL held
  }

  pyb::dict report() const {
    FaceStageReport r;
    {
      // An analysis holds the lock for a whole batch: wait for it without the GIL, so that the other Python threads
      // (an asyncio loop) run meanwhile.
      pyb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(m_analyzer_mutex);
      r = m_analyzer->report();
    }
    pyb::dict out;
    out["detection"] = r.detection;
    out["batch_memory"] = r.batch_memory;
    out["embedding"] = r.embedding;
    out["enhancement"] = r.enhancement;
    out["quality"] = r.quality;
    return out;
  }

 private:
  struct Job {
    std::vector<FaceInput> inputs;
    int64_t batch_size = 32;
    bool single = false;
    bool return_exceptions = false;
    std::unique_ptr<pyb::object> callback;  // released with the GIL held
  };

  FaceResults run_released(std::vector<FaceInput>* inputs, int64_t batch_size) {
    pyb::gil_scoped_release release;
    return run(inputs, batch_size);
  }

  // Decodes (in parallel) and analyzes batch_size images at a time; an analysis error fails the whole batch's
  // inputs with it.
  FaceResults run(std::vector<FaceInput>* inputs, int64_t batch_size) {
    std::lock_guard<std::mutex> lock(m_analyzer_mutex);
    FaceResults results;
    const size_t n = inputs->size();
    results.status.assign(n, Status::ok());
    results.faces.assign(n, {});
    ThreadPool decode_pool(m_settings.exec.threads);
    decode_pool.parallel_for(static_cast<int64_t>(n), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        results.status[static_cast<size_t>(i)] = face_input_decode(&(*inputs)[static_cast<size_t>(i)], kImageMaxPixels);
      }
    });
    const auto chunk = static_cast<size_t>(std::max<int64_t>(1, batch_size));
    for (size_t first = 0; first < n; first += chunk) {
      std::vector<ImageView> views;
      std::vector<size_t> index;
      for (size_t i = first; i < std::min(n, first + chunk); ++i) {
        if (!results.status[i].is_ok()) continue;
        views.push_back((*inputs)[i].pixels.view());
        index.push_back(i);
      }
      if (views.empty()) continue;
      const VarShapeBatch batch = VarShapeBatch::wrap(std::move(views));
      std::vector<std::vector<Face>> faces;
      const Status st = m_analyzer->analyze(batch.view(), &faces);
      for (size_t k = 0; k < index.size(); ++k) {
        if (st.is_ok()) {
          results.faces[index[k]] = std::move(faces[k]);
        } else {
          results.status[index[k]] = st;
        }
      }
    }
    return results;
  }

  void worker_loop() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(m_queue_mutex);
        m_queue_cv.wait(lock, [&] { return m_closing || !m_jobs.empty(); });
        if (m_closing) return;
        job = std::move(m_jobs.front());
        m_jobs.pop_front();
      }
      const FaceResults results = run(&job.inputs, job.batch_size);
      pyb::gil_scoped_acquire gil;
      try {
        pyb::object value;
        pyb::object error = pyb::none();
        try {
          pyb::list list = results_to_python(results, job.return_exceptions);
          value = job.single ? pyb::object(list[0]) : pyb::object(list);
        } catch (pyb::error_already_set& e) {
          value = pyb::none();
          error = e.value();
        }
        (*job.callback)(value, error);
      } catch (pyb::error_already_set& e) {
        e.discard_as_unraisable("kiln.faces: the result callback");
      }
      job.callback.reset();
    }
  }

  FacesCallSettings m_settings;
  std::unique_ptr<FaceAnalyzer> m_analyzer;
  mutable std::mutex m_analyzer_mutex;  // one analysis at a time: calls from Python threads and the service thread
  std::mutex m_queue_mutex;
  std::condition_variable m_queue_cv;
  std::deque<Job> m_jobs;
  bool m_closing = false;
  std::thread m_worker;
};

// The predecessor's enhance_image_for_face_detection on decoded pixels: (encoded bytes, upscale factor). JPEG in ->
// JPEG q95 out, PNG in -> PNG out; encoded once.
pyb::tuple enhance_for_detection(const pyb::bytes& image, const pyb::kwargs& kwargs) {
  FacesCallSettings settings;
  settings.face.upscale = "off";  // the predecessor upscaled inside detect_and_embed, not here
  status_check(exec_settings_apply_env(&settings.exec, env_lookup_process));
  params_apply_kwargs(faces_call_params(), &settings, kwargs, "enhance_image_for_face_detection");
  const std::string data = image;
  Result<std::vector<uint8_t>> encoded = Status(Errc::kInvalidArgument, "");
  int32_t factor = 1;
  {
    pyb::gil_scoped_release release;
    encoded = [&]() -> Result<std::vector<uint8_t>> {
      const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
      const ImageFormat format = image_format_sniff(bytes, data.size());
      DecodeOptions decode;
      decode.channels = 3;
      KILN_TRY_ASSIGN(const ImageBuffer pixels, image_decode(bytes, data.size(), decode));
      KILN_TRY_ASSIGN(const FaceStageModes stages, face_stage_modes(settings.exec.mode, env_lookup_process));
      ThreadPool pool(settings.exec.threads);
      ExecSettings exec = settings.exec;
      exec.mode = stages.enhancement.mode;
      OpExecutor executor(exec_options_make(exec, &pool));
      const VarShapeBatch batch = VarShapeBatch::wrap({pixels.view()});
      PreparedImages prepared;
      KILN_TRY(face_images_prepare(batch.view(), settings.face, executor, &prepared));
      factor = prepared.factors[0];
      EncodeOptions options;
      options.format = format == ImageFormat::kPng ? ImageFormat::kPng : ImageFormat::kJpeg;
      options.jpeg_quality = 95;
      return image_encode(prepared.prepared[0], options);
    }();
  }
  status_check(encoded.status());
  const std::vector<uint8_t>& out = encoded.value();
  return pyb::make_tuple(pyb::bytes(reinterpret_cast<const char*>(out.data()), out.size()),
                         static_cast<double>(factor));
}

// The quality metrics of a face region (or the whole image), and the pose from six BlazeFace landmarks.
pyb::dict face_quality(const pyb::object& image, const pyb::object& bbox, const pyb::object& landmarks) {
  FaceInput input = face_input_from(image, "image");
  if (Status st = face_input_decode(&input, kImageMaxPixels); !st.is_ok()) status_check(st);
  const ImageView view = input.pixels.view();
  FaceDetection face;
  face.box[2] = static_cast<float>(view.width);
  face.box[3] = static_cast<float>(view.height);
  if (!bbox.is_none()) {
    const auto b = bbox.cast<std::vector<float>>();
    if (b.size() != 4 || !(b[2] > b[0]) || !(b[3] > b[1])) raise_value_error("bbox: expected (x0, y0, x1, y1)");
    face.box[0] = b[0];
    face.box[1] = b[1];
    face.box[2] = b[2] - b[0];
    face.box[3] = b[3] - b[1];
  }
  if (!landmarks.is_none()) {
    const auto points = landmarks.cast<std::vector<std::vector<float>>>();
    if (points.size() != 6) raise_value_error("landmarks: expected BlazeFace's six (x, y) points");
    for (size_t k = 0; k < points.size(); ++k) {
      if (points[k].size() != 2) raise_value_error("landmarks: expected (x, y) points");
      face.landmarks[k][0] = points[k][0];
      face.landmarks[k][1] = points[k][1];
    }
    face.landmark_count = 6;
  }
  const RectI r = face_quality_region(face, view.width, view.height);
  auto stages = face_stage_modes(ExecMode::kAuto, env_lookup_process);
  status_check(stages.status());
  QualityMetrics metrics;
  Status st;
  {
    pyb::gil_scoped_release release;
    ExecOptions options;
    options.mode = stages.value().quality.mode;
    const VarShapeBatch batch = VarShapeBatch::wrap({view.crop(r.x, r.y, r.width, r.height)});
    const QualityParams params;
    st = op_run(OpCall{OpKind::kQuality, &params, batch.view(), {}, &metrics}, options);
  }
  status_check(st);
  pyb::dict out;
  out["blur_score"] = metrics.blur;
  out["brightness"] = metrics.brightness;
  out["contrast"] = metrics.contrast;
  out["sharpness"] = metrics.sharpness;
  out["occlusion"] = metrics.occlusion;
  out["overall_score"] = metrics.score;
  if (face.landmark_count == 6) {
    const FacePose pose = face_pose_estimate(face);
    out["pose"] = pyb::make_tuple(pose.yaw, pose.pitch, pose.roll);
  } else {
    out["pose"] = pyb::none();
  }
  out["region"] = pyb::make_tuple(r.x, r.y, r.x + r.width, r.y + r.height);
  return out;
}

}  // namespace

void faces_bindings_add(pyb::module_& m) {
  pyb::class_<FaceService>(m, "FaceService", R"doc(The face analyzer (kiln.faces uses one per set of settings).

FaceService(**settings): the settings of `kiln faces` (detector, min_score, upscale, enhance, the thresholds, ...)
and device/threads/batch_size; FACE_DETECTION_GPU, FACE_EMBEDDING_GPU, IMAGE_ENHANCEMENT_GPU, QUALITY_CHECKS_GPU and
ALL_GPU place each stage.)doc")
      .def(pyb::init<const pyb::kwargs&>())
      .def("detect_and_embed", &FaceService::detect_and_embed, pyb::arg("image"))
      .def("detect_and_embed_batch", &FaceService::detect_and_embed_batch, pyb::arg("images"),
           pyb::arg("batch_size") = 32, pyb::arg("return_exceptions") = false)
      .def("submit", &FaceService::submit, pyb::arg("images"), pyb::arg("batch_size"), pyb::arg("single"),
           pyb::arg("return_exceptions"), pyb::arg("callback"))
      .def("close", &FaceService::close)
      .def_property_readonly("report", &FaceService::report);
  m.def("enhance_image_for_face_detection", &enhance_for_detection, pyb::arg("image_bytes"));
  m.def("face_quality", &face_quality, pyb::arg("image"), pyb::arg("bbox") = pyb::none(),
        pyb::arg("landmarks") = pyb::none());
}

}  // namespace kiln::py
