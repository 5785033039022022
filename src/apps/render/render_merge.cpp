// kiln merge for chart datasets: pieces {stem}.shard-I-of-N.h5 -> a manifest + virtual dataset over them, or
// (--copy) one file with their compressed chunks copied.
#include <filesystem>
#include <map>
#include <optional>

#include "apps/render/hdf5_dataset.h"
#include "apps/render/hdf5_image_table.h"
#include "apps/render/hdf5_vds.h"
#include "io/hdf5_zstd_register.h"
#include "io/durable_file.h"
#include "kiln/apps/merge.h"
#include "kiln/scale.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

struct RenderPiece {
  PieceFacts facts;
  VdsSource source;
};

RenderPiece piece_read(const std::string& path) {
  RenderPiece piece;
  piece.facts = piece_facts_from_name(path);
  piece.source.path = path;
  // Read whole, with its checksum, in a child first: a damaged piece can crash libhdf5.
  if (Status intact = hdf5::checksum_verify_isolated(path); !intact.is_ok()) {
    piece.facts.problems.push_back(intact.message());
    return piece;
  }
  auto summary = hdf5::file_summary_read(path);
  if (!summary.is_ok()) {
    piece.facts.problems.push_back("unreadable (" + summary.status().message() + ")");
    return piece;
  }
  const hdf5::FileAttributes& a = summary->attributes;
  if (a.shard_count <= 0) {
    piece.facts.problems.push_back("not a piece of a sharded job (no shard_count attribute)");
    return piece;
  }
  if (summary->shape.is_virtual || summary->shape.count != a.count) {
    piece.facts.problems.push_back("holds " + std::to_string(summary->shape.count) + " images, its count says " +
                                   std::to_string(a.count));
  }
  piece.facts.shard_index = a.shard_index;
  piece.facts.shard_count = a.shard_count;
  piece.facts.first = a.first_index;
  piece.facts.count = a.count;
  piece.facts.total = a.total;
  piece.facts.complete = a.complete;
  std::error_code ec;
  piece.source.bytes = fs::file_size(path, ec);
  piece.source.summary = std::move(summary).value();
  return piece;
}

}  // namespace

Result<MergeSummary> render_merge(const std::vector<std::string>& paths, const MergeConfig& config,
                                  std::vector<std::string>* problems) {
  hdf5::ErrorScope quiet;
  KILN_TRY(hdf5_zstd_register());
  std::vector<RenderPiece> pieces;
  for (const std::string& path : paths) pieces.push_back(piece_read(path));
  pieces_sort(&pieces);

  // Settings: every piece against the reference (the shard's own index aside).
  // The reference is a piece of the settings most pieces share, so a stray piece is the one named.
  const RenderPiece* reference = nullptr;
  std::map<std::string, int64_t> votes;
  for (const RenderPiece& p : pieces) {
    if (p.facts.problems.empty()) ++votes[p.source.summary.attributes.dataset.config_json];
  }
  for (const RenderPiece& p : pieces) {
    if (!p.facts.problems.empty()) continue;
    if (reference == nullptr || votes[p.source.summary.attributes.dataset.config_json] >
                                    votes[reference->source.summary.attributes.dataset.config_json]) {
      reference = &p;
    }
  }
  for (RenderPiece& p : pieces) {
    if (!p.facts.problems.empty() || &p == reference) continue;
    // The job's size and piece count are pieces_check's to compare (by majority, not against one piece).
    hdf5::FileAttributes want = reference->source.summary.attributes;
    want.shard_index = p.source.summary.attributes.shard_index;
    want.shard_count = p.source.summary.attributes.shard_count;
    want.total = p.source.summary.attributes.total;
    std::string diff = hdf5::settings_diff(p.source.summary.attributes, p.source.summary.shape, want,
                                           hdf5::layout_from(want, reference->source.summary.shape));
    if (!diff.empty()) {
      // settings_diff speaks of an existing file and this run: here it is this piece and the reference piece.
      const std::string existing = " in the existing file, ";
      if (const size_t at = diff.find(existing); at != std::string::npos) diff.replace(at, existing.size(), " here, ");
      if (diff.size() > 4 && diff.compare(diff.size() - 4, 4, " now") == 0) diff.resize(diff.size() - 4);
      p.facts.problems.push_back("made with other settings than " + reference->facts.path + " (" + diff + " there)");
    }
  }
  *problems = pieces_check(pieces_facts(pieces));
  if (!problems->empty()) return pieces_refused(pieces.size(), problems->size());

  std::vector<VdsSource> sources;
  for (const RenderPiece& p : pieces) sources.push_back(p.source);
  const hdf5::FileSummary& first = sources.front().summary;
  hdf5::FileAttributes attributes = first.attributes;
  attributes.shard_index = 0;
  attributes.shard_count = 0;
  attributes.first_index = 0;
  attributes.count = attributes.total;
  attributes.checksum.clear();
  attributes.complete = false;
  attributes.dataset.run_report.clear();
  attributes.dataset.fallbacks = 0;
  for (const VdsSource& s : sources) {
    attributes.dataset.created_at = std::max(attributes.dataset.created_at, s.summary.attributes.dataset.created_at);
    attributes.dataset.fallbacks += s.summary.attributes.dataset.fallbacks;
  }

  // A panel's pieces each hold their images' table: the merged output holds them end to end.
  std::optional<ImageTable> table;
  for (const VdsSource& s : sources) {
    KILN_TRY_ASSIGN(std::optional<ImageTable> piece_table, hdf5::image_table_read(s.path));
    const bool first_has = &s == &sources.front() ? piece_table.has_value() : table.has_value();
    if (piece_table.has_value() != first_has) {
      return io_error(s.path + (first_has ? " lacks the per-image table (symbol, dates) that " : " holds a per-image "
                      "table (symbol, dates) that ") + sources.front().path + (first_has ? " holds" : " lacks"));
    }
    if (!piece_table) continue;
    if (!table) table.emplace();
    table->append(*piece_table);
  }

  MergeSummary summary;
  summary.kind = "render";
  summary.pieces = static_cast<int64_t>(sources.size());
  summary.items = attributes.total;
  KILN_TRY(parent_folder_create(config.output));  // only once the checks passed
  if (config.copy) {
    std::error_code ec;  // a manifest of an earlier VDS merge to this output would describe other files
    fs::remove(hdf5::manifest_path(config.output), ec);
    std::vector<std::string> files;
    for (const VdsSource& s : sources) files.push_back(s.path);
    KILN_TRY(hdf5::files_concat(config.output, files, hdf5::layout_from(attributes, first.shape), attributes));
    summary.output = config.output + " (one file, " + attributes.compression + " chunks copied)";
  } else {
    KILN_TRY(hdf5_vds_write(config.output, sources, attributes, first.shape));
    summary.output = config.output + " (virtual dataset over " + std::to_string(sources.size()) + " pieces) + " +
                     hdf5::manifest_path(config.output);
  }
  if (table) KILN_TRY(hdf5::image_table_write(config.output, *table));
  return summary;
}

}  // namespace kiln
