// A batch of the face pass in the device memory of the backend the detector's model reads (CUDA): each decoded image
// goes up once (Backend::images_upload, through the pinned staging slots) beside room for the prepared (upscaled,
// enhanced) copies of the small photos, which are made there from the uploaded originals (or, where the enhancement
// stage is not on that device, made on the host and uploaded); every stage placed on that backend reads them there:
// the detector's preprocess of whole images, tiles and crops, the alignment warp, the per-face quality. Only results
// come back.
#pragma once

#include <string>
#include <vector>

#include "core/backend_block.h"
#include "kiln/image_ops.h"

namespace kiln {

class FaceDeviceImages {
 public:
  // Uploads `originals` (host) into `device`'s memory, with room after them for images of `prepared_shapes`
  // (storage()); until prepared_set, each image is seen as its original.
  Status upload(Backend& device, const VarShapeBatchView& originals, const std::vector<ImageShape>& prepared_shapes);
  // Uploads host images into storage(): host[changed[k]] into storage()[k].
  Status storage_upload(const VarShapeBatchView& host, const std::vector<int64_t>& changed);
  // Image changed[k] is seen as storage()[k] from now on (the others as their originals).
  void prepared_set(const std::vector<int64_t>& changed);
  // Device-space views: the originals, the prepared copies' room, and each image as the detector sees it.
  VarShapeBatchView originals() const { return m_originals.view(); }
  VarShapeBatchView storage() const { return m_storage.view(); }
  VarShapeBatchView prepared() const { return m_prepared.view(); }
  Backend* backend() const { return m_block.backend(); }
  void reset();

 private:
  DeviceBlock m_block;
  VarShapeBatch m_originals;
  VarShapeBatch m_storage;
  VarShapeBatch m_prepared;
};

// Whether `executor` places `call` on `device` now (nothing runs).
bool face_call_placed_on(OpExecutor& executor, const OpCall& call, const Backend* device);

}  // namespace kiln
