// face_dedup_scale: kiln's dedup over a million faces (issue 38.16). The faces are the real embeddings of the test
// photos' faces (and their mirror images), repeated with noise (tests/common/face_dedup_stream.h), 30 % of them a
// noisy repeat of an earlier face. Measures: the whole stream through FaceDedup (exact until --exact-faces kept, then
// the HNSW graph); the graph's recall against the exact search on the first --compare faces (graph from a tenth of
// them); and what the exact search alone would take for the whole stream, from its measured per-face cost against
// the final kept set (the cost grows linearly with the kept set: about N x cost / 2). Prints one JSON object.
#include <faiss/IndexFlat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "apps/faces/face_dedup.h"
#include "bench_common.h"
#include "common/face_dedup_stream.h"
#include "kiln/apps/faces.h"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

const char* const kPhotos[] = {"/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
                               "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg",
                               "/usr/lib/python3/dist-packages/skimage/data/camera.png"};

struct Run {
  std::vector<int64_t> duplicate_of;
  int64_t kept = 0;
  double seconds = 0;
};

Run dedup_run(const float* faces, int64_t n, float threshold, int64_t exact_faces) {
  kiln::FaceDedup dedup(threshold, exact_faces);
  Run run;
  run.duplicate_of.reserve(static_cast<size_t>(n));
  const auto t = Clock::now();
  for (int64_t i = 0; i < n; ++i) {
    float cosine = 0;
    run.duplicate_of.push_back(dedup.check_and_add(faces + i * kiln::kFaceEmbeddingSize, &cosine));
    if ((i + 1) % 50000 == 0) {
      std::fprintf(stderr, "face_dedup_scale: %lld of %lld faces, %.0f s\n", static_cast<long long>(i + 1),
                   static_cast<long long>(n), seconds_since(t));
    }
  }
  run.seconds = seconds_since(t);
  run.kept = dedup.kept();
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t faces = 1'000'000;
  int64_t exact_faces = kiln::kFaceDedupExactFaces;
  int64_t compare = 30'000;
  double threshold = 0.7;
  CLI::App app{"face_dedup_scale: kiln's face dedup over a stream grown from real embeddings; prints one JSON object",
               "face_dedup_scale"};
  app.add_option("--faces", faces, "Faces in the stream (default 1000000)")->check(kiln::bench::positive());
  app.add_option("--exact-faces", exact_faces, "Kept faces searched exactly before the graph (default 20000)")
      ->check(kiln::bench::positive());
  app.add_option("--compare", compare, "Faces of the recall comparison with the exact search (default 30000)")
      ->check(kiln::bench::positive());
  app.add_option("--threshold", threshold, "Dedup cosine (default 0.7)");
  if (const std::optional<int> code = kiln::bench::args_parse(app, argc, argv)) return *code;
  std::string error;
  const std::vector<float> real =
      kiln::test::face_embeddings_of_photos(std::vector<std::string>(std::begin(kPhotos), std::end(kPhotos)), &error);
  if (real.empty()) {
    std::fprintf(stderr, "face_dedup_scale: %s\n", error.c_str());
    return 2;
  }
  const int64_t dims = kiln::kFaceEmbeddingSize;
  const std::vector<float> stream = kiln::test::face_dedup_stream(real, dims, faces, 0.3, 1);
  const auto threshold_f = static_cast<float>(threshold);

  const Run run = dedup_run(stream.data(), faces, threshold_f, exact_faces);

  // The exact search's per-face cost against the final kept set.
  faiss::IndexFlatIP flat(dims);
  for (int64_t i = 0; i < faces; ++i) {
    if (run.duplicate_of[static_cast<size_t>(i)] < 0) flat.add(1, stream.data() + i * dims);
  }
  const int64_t probes = 50;
  auto t = Clock::now();
  for (int64_t q = 0; q < probes; ++q) {
    float d = 0;
    faiss::Index::idx_t label = -1;
    flat.search(1, stream.data() + ((q * 7919) % faces) * dims, 1, &d, &label);
  }
  const double exact_per_face_at_end = seconds_since(t) / probes;

  // Recall: the graph (taking over at a tenth) against the exact search on the first `compare` faces.
  const int64_t m = std::min(compare, faces);
  const Run exact = dedup_run(stream.data(), m, threshold_f, std::numeric_limits<int64_t>::max());
  const Run graph = dedup_run(stream.data(), m, threshold_f, std::max<int64_t>(1, m / 10));
  int64_t exact_duplicates = 0;
  int64_t found = 0;
  for (size_t i = 0; i < static_cast<size_t>(m); ++i) {
    if (exact.duplicate_of[i] < 0) continue;
    ++exact_duplicates;
    found += graph.duplicate_of[i] >= 0 ? 1 : 0;
  }
  const double recall = exact_duplicates > 0 ? static_cast<double>(found) / static_cast<double>(exact_duplicates) : 1;
  const double exact_projected = static_cast<double>(faces) * exact_per_face_at_end / 2;
  std::printf(
      "{\"bench\": \"face_dedup_scale\", \"commit\": \"%s\", \"cpu\": \"%s\", \"real_faces\": %lld, "
      "\"faces\": %lld, \"exact_faces\": %lld, \"threshold\": %.3f, \"seconds\": %.2f, \"faces_per_s\": %.1f, "
      "\"kept\": %lld, \"duplicates\": %lld, \"exact_ms_per_face_at_end\": %.3f, \"exact_projected_seconds\": %.0f, "
      "\"speedup_vs_exact\": %.2f, \"compare_faces\": %lld, \"compare_exact_seconds\": %.2f, "
      "\"compare_graph_seconds\": %.2f, \"exact_duplicates\": %lld, \"graph_found\": %lld, \"recall\": %.5f}\n",
      kiln::bench::git_commit().c_str(), kiln::bench::cpu_model().c_str(),
      static_cast<long long>(real.size() / static_cast<size_t>(dims)), static_cast<long long>(faces),
      static_cast<long long>(exact_faces), threshold, run.seconds, static_cast<double>(faces) / run.seconds,
      static_cast<long long>(run.kept), static_cast<long long>(faces - run.kept), exact_per_face_at_end * 1e3,
      exact_projected, exact_projected / run.seconds, static_cast<long long>(m), exact.seconds, graph.seconds,
      static_cast<long long>(exact_duplicates), static_cast<long long>(found), recall);
  return 0;
}
