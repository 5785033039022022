// dlib's HOG frontal face detector, the detection peer of bench/faces_peers. In a file of its own because dlib's HOG
// code is header-only templates compiled by its user: this file alone is built for the machine it runs on
// (-march=native, as dlib's own CMake turns on the host's SSE4/AVX), the rest of the program keeps kiln's flags.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

namespace kiln::bench {

struct DlibPeer;

// The detector and a dlib copy of each RGB u8 image (made here, outside any timing).
std::shared_ptr<DlibPeer> dlib_peer_open(const std::vector<cv::Mat>& rgb);
// Runs the detector on every image, one at a time, without upsampling; returns the faces found.
int64_t dlib_peer_pass(DlibPeer& peer);
std::string dlib_peer_version();  // "19.24.0"
std::string dlib_peer_flags();    // the compile flags this file was built with

}  // namespace kiln::bench
