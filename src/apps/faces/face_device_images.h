// A batch of the face pass in the device memory of the backend the detector's model reads (CUDA): each decoded image
// goes up once (Backend::images_upload, through the pinned staging slots), with the prepared (upscaled, enhanced)
// copies of the small photos, and every stage placed on that backend reads them there: the detector's preprocess of
// whole images, tiles and crops, the alignment warp, the per-face quality. Only results come back.
#pragma once

#include <string>

#include "apps/faces/face_prepare.h"
#include "core/backend_block.h"
#include "kiln/image_ops.h"

namespace kiln {

class FaceDeviceImages {
 public:
  // Uploads `originals` (host) and each prepared image that is not its original into `device`'s memory.
  Status upload(Backend& device, const VarShapeBatchView& originals, const PreparedImages& prepared);
  // Device-space views: the originals, and each image as the detector sees it (its original where unchanged).
  VarShapeBatchView originals() const { return m_originals.view(); }
  VarShapeBatchView prepared() const { return m_prepared.view(); }
  Backend* backend() const { return m_block.backend(); }
  void reset();

 private:
  DeviceBlock m_block;
  VarShapeBatch m_originals;
  VarShapeBatch m_prepared;
};

// Whether `executor` places `call` on `device` now (nothing runs).
bool face_call_placed_on(OpExecutor& executor, const OpCall& call, const Backend* device);

}  // namespace kiln
