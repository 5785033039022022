#include "faces_peers_dlib.h"

#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/matrix.h>
#include <dlib/revision.h>

namespace kiln::bench {

struct DlibPeer {
  dlib::frontal_face_detector detector = dlib::get_frontal_face_detector();
  std::vector<dlib::matrix<dlib::rgb_pixel>> images;
};

std::shared_ptr<DlibPeer> dlib_peer_open(const std::vector<cv::Mat>& rgb) {
  auto peer = std::make_shared<DlibPeer>();
  for (const cv::Mat& m : rgb) {
    dlib::matrix<dlib::rgb_pixel> image(m.rows, m.cols);
    for (int y = 0; y < m.rows; ++y) {
      const uint8_t* row = m.ptr<uint8_t>(y);
      for (int x = 0; x < m.cols; ++x) image(y, x) = dlib::rgb_pixel(row[3 * x], row[3 * x + 1], row[3 * x + 2]);
    }
    peer->images.push_back(std::move(image));
  }
  return peer;
}

int64_t dlib_peer_pass(DlibPeer& peer) {
  int64_t faces = 0;
  // No pyramid_up (upsample 0); adjust_threshold 0, the detector's own threshold.
  for (const auto& image : peer.images) faces += static_cast<int64_t>(peer.detector(image).size());
  return faces;
}

std::string dlib_peer_version() {
  return std::to_string(DLIB_MAJOR_VERSION) + "." + std::to_string(DLIB_MINOR_VERSION) + "." +
         std::to_string(DLIB_PATCH_VERSION);
}

std::string dlib_peer_flags() { return KILN_DLIB_PEER_FLAGS; }

}  // namespace kiln::bench
