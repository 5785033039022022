// kiln faces search: the nearest faces of a `kiln faces` output to the faces of query images (analyzed with the
// output's own face settings), exact or with an IVF index (trained once, kept beside the output), and optionally the
// index's recall against exact search.
#if KILN_HAS_FACES
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "apps/faces/face_search_preview.h"
#include "cli/job_cli.h"
#include "kiln/apps/face_search.h"
#include "kiln/apps/faces.h"
#include "kiln/codec.h"

namespace kiln::cli {

namespace {

struct SearchArgs {
  std::vector<std::string> queries;
  std::string index;
  int64_t k = 10;
  int64_t recall_queries = 0;
  bool json = false;
  std::string preview;
};

constexpr int32_t kPreviewHits = 8;  // hits per query face on the --preview sheet, at most

// Up to `count` rows of the collection, evenly spaced, as recall queries.
std::vector<float> sample_rows(const FaceCollection& c, int64_t count) {
  std::vector<float> out;
  const int64_t n = std::min(count, c.count);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = i * c.count / n;
    out.insert(out.end(), c.embeddings.begin() + row * kFaceEmbeddingSize,
               c.embeddings.begin() + (row + 1) * kFaceEmbeddingSize);
  }
  return out;
}

int search_run(const SearchArgs& args, const CliParams& flags) {
  FaceIndexSettings index_settings;
  ExecSettings exec;
  if (Status s = exec_settings_apply_env(&exec, env_lookup_process); !s.is_ok()) return exit_with(s);
  if (Status s = flags.apply(&index_settings); !s.is_ok()) return exit_with(s);
  auto collection = face_collection_read(args.index);
  if (!collection.is_ok()) return exit_with(collection.status());
  const FaceCollection& c = collection.value();
  auto face_settings = face_settings_from_json(c.settings);
  if (!face_settings.is_ok()) return exit_with(face_settings.status());
  std::string index_note;
  auto index = face_index_open(c, args.index, index_settings, &index_note);
  if (!index.is_ok()) return exit_with(index.status());
  auto analyzer = FaceAnalyzer::open(face_settings.value(), exec);
  if (!analyzer.is_ok()) return exit_with(analyzer.status());
  std::fprintf(stderr, "Index: %s\n", index.value()->description().c_str());
  if (!index_note.empty()) std::fprintf(stderr, "Index: %s\n", index_note.c_str());

  DecodeOptions decode;
  decode.channels = 3;
  std::vector<FaceSearchQuery> shown;  // --preview
  for (const std::string& query : args.queries) {
    auto image = image_decode_file(query, decode);
    if (!image.is_ok()) return exit_with(image.status());
    const VarShapeBatch batch = VarShapeBatch::wrap({image.value().view()});
    std::vector<std::vector<Face>> faces;
    if (Status s = analyzer.value()->analyze(batch.view(), &faces); !s.is_ok()) return exit_with(s);
    if (faces[0].empty()) std::fprintf(stderr, "kiln: %s: no face found\n", query.c_str());
    for (size_t f = 0; f < faces[0].size(); ++f) {
      const Face& face = faces[0][f];
      std::vector<FaceHit> hits;
      if (Status s = index.value()->search(face.embedding.data(), 1, args.k, &hits); !s.is_ok()) return exit_with(s);
      const float* b = face.detection.box;
      if (!args.preview.empty()) {
        FaceSearchQuery& q = shown.emplace_back();
        q.image = query;
        q.face = static_cast<int32_t>(f);
        std::copy(b, b + 4, q.box);
        q.hits = hits;
      }
      nlohmann::json hits_json = nlohmann::json::array();
      if (!args.json) {
        std::printf("%s face %zu (box %.0f, %.0f, %.0f, %.0f):\n", query.c_str(), f, b[0], b[1], b[0] + b[2],
                    b[1] + b[3]);
      }
      for (size_t j = 0; j < hits.size() && hits[j].row >= 0; ++j) {
        const int64_t row = hits[j].row;
        const float* hb = c.boxes.data() + row * 4;
        if (args.json) {
          hits_json.push_back({{"row", row},
                               {"cosine", hits[j].cosine},
                               {"image", c.paths[static_cast<size_t>(row)]},
                               {"bbox", {hb[0], hb[1], hb[0] + hb[2], hb[1] + hb[3]}}});
        } else {
          std::printf("%4zu  %.4f  row %lld  %s  (%.0f, %.0f, %.0f, %.0f)\n", j + 1, hits[j].cosine,
                      static_cast<long long>(row), c.paths[static_cast<size_t>(row)].c_str(), hb[0], hb[1],
                      hb[0] + hb[2], hb[1] + hb[3]);
        }
      }
      if (args.json) {
        const nlohmann::json line = {{"query", query}, {"face", f}, {"bbox", {b[0], b[1], b[0] + b[2], b[1] + b[3]}},
                                     {"hits", hits_json}};
        std::printf("%s\n", line.dump().c_str());
      }
    }
  }
  if (!args.preview.empty() && !shown.empty()) {
    const int32_t hits_shown = static_cast<int32_t>(std::min<int64_t>(args.k, kPreviewHits));
    if (Status s = face_search_preview_write(args.preview, shown, c, hits_shown).status(); !s.is_ok()) {
      return exit_with(s);
    }
  }
  if (args.recall_queries > 0) {
    const std::vector<float> queries = sample_rows(c, args.recall_queries);
    const int64_t count = static_cast<int64_t>(queries.size()) / kFaceEmbeddingSize;
    auto recall = face_index_recall(*index.value(), c.embeddings.data(), c.count, queries.data(), count, args.k);
    if (!recall.is_ok()) return exit_with(recall.status());
    std::fprintf(stderr, "Recall@%lld against exact search: %.4f (%lld queries from the index)\n",
                 static_cast<long long>(args.k), recall.value(), static_cast<long long>(count));
  }
  return 0;
}

}  // namespace

Runner faces_search_command_add(CLI::App& faces) {
  auto* cmd = faces.add_subcommand("search", "The nearest faces of a `kiln faces` output to the faces of images");
  auto args = std::make_shared<SearchArgs>();
  cmd->add_option("queries", args->queries, "Query images (JPEG, PNG, WebP, GIF, BMP, TIFF, HEIC/AVIF)")->required();
  cmd->add_option("--index", args->index, "A `kiln faces` output (.h5)")->required();
  cmd->add_option("-k", args->k, "Faces per query face")->check(CLI::Range(int64_t{1}, int64_t{10000}));
  cmd->add_option("--recall", args->recall_queries,
                  "Also measure the index's recall@k against exact search with this many of its own faces as queries");
  cmd->add_flag("--json", args->json, "One JSON line per query face");
  cmd->add_option("--preview", args->preview,
                  "Write a PNG here: each query face beside its nearest faces (at most 8), with their cosines");
  auto flags = std::make_shared<CliParams>(cmd, face_index_params());
  return [args, flags] { return search_run(*args, *flags); };
}

}  // namespace kiln::cli
#endif  // KILN_HAS_FACES
