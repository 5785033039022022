// Writing (N, ...) f32/f16 arrays whose N is known only at the end (inputs may be skipped) to .npy, .npz or .h5,
// crash-safely: everything goes to temporary files in the destination folder, which are fsynced and renamed to
// the final name by finish(); until then (and after a failure or abandon()) the destination is untouched.
//  - .npy: one array; NPY v1.0, little-endian '<f4' / '<f2' (or an integer array's '|u1', '<i4', '<i8'), C order;
//    the header is rewritten with the final N.
//    The item names go to "<stem>.paths.txt" (one per line), also via temp + rename, before the array is renamed.
//  - .npz: every array as "<name>.npy" plus "paths.npy" (the item names), stored uncompressed (numpy.load reads it).
//  - .h5 / .hdf5: one dataset per array (chunked one item per chunk, f32 or IEEE half, or the integers'), a "paths"
//    variable-length string dataset, and the given attributes on the root group.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

enum class TensorFileFormat : uint8_t { kNpy = 0, kNpz, kHdf5 };
// .npy -> kNpy, .npz -> kNpz, .h5/.hdf5 -> kHdf5; InvalidArgument for anything else.
Result<TensorFileFormat> tensor_file_format_from_path(const std::string& path);

struct TensorAttributes {
  std::vector<std::pair<std::string, std::string>> text;
  std::vector<std::pair<std::string, std::vector<double>>> numbers;
};

// What an array holds: floats of the file's dtype (open_arrays' f32 / f16), or integers as a model gave them.
enum class ArrayValues : uint8_t { kFloat = 0, kU8, kI32, kI64 };

// One array of a file: its name (the .h5 dataset, the .npz member) and the shape of one item.
struct TensorArraySpec {
  std::string name;
  std::vector<int64_t> item_shape;
  ArrayValues values = ArrayValues::kFloat;
};

class TensorWriter {
 public:
  TensorWriter() = default;
  ~TensorWriter();
  TensorWriter(const TensorWriter&) = delete;
  TensorWriter& operator=(const TensorWriter&) = delete;

  // item_shape: the shape of one item, e.g. {3, 512, 512}; dtype kF32 or kF16. One array named "images".
  Status open(const std::string& path, const std::vector<int64_t>& item_shape, PixelType dtype);
  // Several arrays that grow together (.npz and .h5; .npy takes one).
  Status open_arrays(const std::string& path, const std::vector<TensorArraySpec>& arrays, PixelType dtype);
  // Appends `count` packed items (count * item_bytes() bytes; f16 as IEEE half bits) to the only array.
  Status append(const void* items, int64_t count);
  // Appends `count` items to every array: items[a] holds array a's.
  Status append(const std::vector<const void*>& items, int64_t count);
  // Writes the names (one per item: paths in .h5 and .npz, "<stem>.paths.txt" next to .npy) and attributes (.h5
  // only), then commits the file under its final name.
  Status finish(const std::vector<std::string>& names, const TensorAttributes& attributes = {});
  // Closes and removes the temporary files; the destination stays as it was.
  void abandon();
  void reset() { abandon(); }

  int64_t count() const { return m_count; }
  size_t item_bytes() const { return m_arrays.empty() ? 0 : m_arrays[0].item_bytes; }
  bool is_open() const { return m_open; }
  const std::string& path() const { return m_path; }

 private:
  Status named(Status status) const;
  struct Array {
    TensorArraySpec spec;
    size_t item_bytes = 0;
    int fd = -1;            // .npy, .npz: the array's file
    std::string tmp_path;   // .npz: the array's own temporary file
    int64_t dataset = -1;   // .h5: hid_t
  };

  Status npy_header_write(Array& array, bool final_header);
  Status npy_append(Array& array, const void* items, int64_t count);
  Status npz_finish(const std::vector<std::string>& names);
  Status h5_open();
  // The groups above a dataset named like a path ("/model/out"), without stored times.
  Status groups_create(const std::string& dataset_name);
  Status h5_append(Array& array, const void* items, int64_t count);
  Status h5_finish(const std::vector<std::string>& names, const TensorAttributes& attributes);

  std::string m_path;
  std::string m_tmp_path;
  TensorFileFormat m_format = TensorFileFormat::kNpy;
  std::vector<Array> m_arrays;
  PixelType m_dtype = PixelType::kF32;
  int64_t m_count = 0;
  bool m_open = false;
  int m_fd = -1;           // the temporary file of the whole output (.npy, .npz)
  int64_t m_file = -1;     // .h5: hid_t of the file
  int64_t m_h5_type = -1;  // .h5: element type (owned when f16)
};

}  // namespace kiln
