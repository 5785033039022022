#include "apps/faces/faces_rows.h"

#include <hdf5.h>

#include "io/hdf5_handle.h"
#include "kiln/apps/faces.h"

namespace kiln {

const std::vector<TensorArraySpec>& faces_output_arrays() {
  static const std::vector<TensorArraySpec> arrays = {
      {"embeddings", {kFaceEmbeddingSize}}, {"image_index", {}}, {"box", {4}}, {"landmarks", {6, 2}},
      {"det_score", {}}, {"quality", {5}}, {"pose", {3}}, {"accepted", {}}};
  return arrays;
}

int64_t faces_item_floats(const TensorArraySpec& spec) {
  int64_t n = 1;
  for (const int64_t d : spec.item_shape) n *= d;
  return n;
}

int64_t faces_row_floats() {
  int64_t n = 0;
  for (const TensorArraySpec& spec : faces_output_arrays()) n += faces_item_floats(spec);
  return n;
}

void face_row_append(const Face& f, int64_t image_index, std::vector<float>* rows) {
  rows->insert(rows->end(), f.embedding.begin(), f.embedding.end());
  rows->push_back(static_cast<float>(image_index));
  rows->insert(rows->end(), std::begin(f.detection.box), std::end(f.detection.box));
  float landmarks[12] = {};  // faces without landmarks (none today: UltraFace's are refined) keep zeros
  for (int k = 0; k < f.detection.landmark_count; ++k) {
    landmarks[2 * k] = f.detection.landmarks[k][0];
    landmarks[2 * k + 1] = f.detection.landmarks[k][1];
  }
  rows->insert(rows->end(), std::begin(landmarks), std::end(landmarks));
  rows->push_back(f.detection.score);
  const QualityMetrics& q = f.quality;
  for (const double v : {q.blur, q.brightness, q.contrast, q.sharpness, q.score}) rows->push_back(static_cast<float>(v));
  rows->insert(rows->end(), {f.pose.yaw, f.pose.pitch, f.pose.roll});
  rows->push_back(f.accepted ? 1.0f : 0.0f);
}

Status faces_rows_write(TensorWriter* writer, const float* rows, int64_t count) {
  const int64_t width = faces_row_floats();
  for (int64_t r = 0; r < count; ++r) {
    const float* row = rows + r * width;
    std::vector<const void*> items;
    for (const TensorArraySpec& spec : faces_output_arrays()) {
      items.push_back(row);
      row += faces_item_floats(spec);
    }
    KILN_TRY(writer->append(items, 1));
  }
  return Status::ok();
}

std::string FacesFile::text_of(const std::string& name) const {
  for (const auto& [key, value] : text) {
    if (key == name) return value;
  }
  return {};
}

double FacesFile::number_of(const std::string& name, double fallback) const {
  for (const auto& [key, value] : numbers) {
    if (key == name) return value;
  }
  return fallback;
}

namespace {

// Dataset `name` as float rows of `width`, into column `column` of the interleaved rows.
Status array_read(hid_t file, const std::string& path, const TensorArraySpec& spec, int64_t column, FacesFile* out) {
  hdf5::Handle ds = hdf5::dataset_handle(H5Dopen2(file, spec.name.c_str(), H5P_DEFAULT));
  if (!ds.valid()) return hdf5::error(path + ": no dataset '" + spec.name + "' (not a kiln faces output?)");
  hdf5::Handle space = hdf5::space_handle(H5Dget_space(ds.get()));
  hsize_t dims[4] = {0, 0, 0, 0};
  const int rank = H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  if (rank != static_cast<int>(spec.item_shape.size()) + 1 || static_cast<int64_t>(dims[0]) != out->count) {
    return unsupported_format(path + ": '" + spec.name + "' does not have one row per face of the expected shape");
  }
  for (size_t d = 0; d < spec.item_shape.size(); ++d) {
    if (static_cast<int64_t>(dims[d + 1]) != spec.item_shape[d]) {
      return unsupported_format(path + ": '" + spec.name + "' has the wrong row shape");
    }
  }
  const int64_t width = faces_item_floats(spec);
  std::vector<float> values(static_cast<size_t>(out->count * width));
  if (out->count > 0 && H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    return hdf5::error(path + ": reading '" + spec.name + "'");
  }
  const int64_t row_width = faces_row_floats();
  for (int64_t r = 0; r < out->count; ++r) {
    std::copy_n(values.data() + r * width, width, out->rows.data() + r * row_width + column);
  }
  return Status::ok();
}

herr_t attribute_collect(hid_t location, const char* name, const H5A_info_t*, void* data) {
  auto* out = static_cast<FacesFile*>(data);
  hdf5::Handle attribute = hdf5::attribute_handle(H5Aopen(location, name, H5P_DEFAULT));
  hdf5::Handle type = hdf5::type_handle(H5Aget_type(attribute.get()));
  if (!attribute.valid() || !type.valid()) return 0;
  if (H5Tget_class(type.get()) == H5T_STRING) {
    auto text = hdf5::attribute_read_string(attribute.get(), name);
    if (text.is_ok()) out->text.emplace_back(name, text.value());
  } else if (H5Tget_class(type.get()) == H5T_FLOAT || H5Tget_class(type.get()) == H5T_INTEGER) {
    hdf5::Handle space = hdf5::space_handle(H5Aget_space(attribute.get()));
    double value = 0;
    if (H5Sget_simple_extent_npoints(space.get()) == 1 &&
        H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value) >= 0) {
      out->numbers.emplace_back(name, value);
    }
  }
  return 0;
}

}  // namespace

Result<FacesFile> faces_file_read(const std::string& path) {
  hdf5::ErrorScope quiet;
  hdf5::Handle file = hdf5::file_handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) return hdf5::error(path + ": cannot open as HDF5");
  FacesFile out;
  {
    hdf5::Handle ds = hdf5::dataset_handle(H5Dopen2(file.get(), "embeddings", H5P_DEFAULT));
    if (!ds.valid()) return unsupported_format(path + ": no dataset 'embeddings' (not a kiln faces output?)");
    hdf5::Handle space = hdf5::space_handle(H5Dget_space(ds.get()));
    hsize_t dims[2] = {0, 0};
    if (H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 2) {
      return unsupported_format(path + ": 'embeddings' is not (N, 512)");
    }
    out.count = static_cast<int64_t>(dims[0]);
  }
  out.rows.resize(static_cast<size_t>(out.count * faces_row_floats()));
  int64_t column = 0;
  for (const TensorArraySpec& spec : faces_output_arrays()) {
    KILN_TRY(array_read(file.get(), path, spec, column, &out));
    column += faces_item_floats(spec);
  }
  KILN_TRY(faces_paths_read(file.get(), path, out.count, &out.paths));
  hsize_t index = 0;
  if (H5Aiterate2(file.get(), H5_INDEX_NAME, H5_ITER_INC, &index, attribute_collect, &out) < 0) {
    return hdf5::error(path + ": cannot read its attributes");
  }
  return out;
}

}  // namespace kiln
