// The rows of a `kiln faces` output: one per kept face, the arrays of faces_output_arrays() one after the other
// (the job's parts store them so), written to and read from the .h5 / .npz output.
#pragma once

#include <string>
#include <vector>

#include "io/tensor_writer.h"
#include "kiln/apps/faces.h"
#include "kiln/status.h"

namespace kiln {

// embeddings (512), image_index, box (4), landmarks (6, 2), det_score, quality (5), pose (3), accepted.
const std::vector<TensorArraySpec>& faces_output_arrays();
int64_t faces_item_floats(const TensorArraySpec& spec);
int64_t faces_row_floats();

// The root attributes of a faces output: settings (JSON), detector, embedder, what a row is, images, duplicates.
TensorAttributes faces_output_attributes(const std::string& settings, const FaceSettings& face, int64_t images,
                                         int64_t duplicates);

// Appends a face's row (the arrays of faces_output_arrays(), one after the other) to `rows`.
void face_row_append(const Face& f, int64_t image_index, std::vector<float>* rows);

// Appends `count` rows to a writer opened with faces_output_arrays().
Status faces_rows_write(TensorWriter* writer, const float* rows, int64_t count);

// A faces output file (.h5) read back whole: the rows, each row's image path, and the root attributes.
struct FacesFile {
  int64_t count = 0;
  std::vector<float> rows;  // count * faces_row_floats()
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::string>> text;       // text attributes (settings, detector, ...)
  std::vector<std::pair<std::string, double>> numbers;         // scalar number attributes (images, duplicates, ...)
  std::string text_of(const std::string& name) const;          // "" when absent
  double number_of(const std::string& name, double fallback) const;
};
Result<FacesFile> faces_file_read(const std::string& path);
// The 'paths' dataset of an open faces output: `count` strings, one per face.
Status faces_paths_read(int64_t file, const std::string& path, int64_t count, std::vector<std::string>* out);

}  // namespace kiln
