// The faces job: images in batches -> decode (worker threads) -> FaceLanes (FaceAnalyzers; on the CPU one per
// thread, taking the batches' photos one at a time) -> dedup -> one output row per kept face and a JSON line per face
// and per unreadable image. Every few batches the rows and lines go to a part (faces_parts.h), so that a killed run
// continues with --resume; the outputs (TensorWriter .h5 or .npz, the JSON lines) are assembled from the parts at the
// end.
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <future>

#include <nlohmann/json.hpp>

#include "apps/faces/face_crops.h"
#include "apps/faces/face_dedup.h"
#include "apps/faces/face_lanes.h"
#include "apps/faces/faces_parts.h"
#include "apps/faces/faces_preview.h"
#include "apps/faces/faces_rows.h"
#include "apps/images/image_batches.h"
#include "apps/images/json_lines.h"
#include "core/thread_pool.h"
#include "io/output_lock.h"
#include "io/tensor_writer.h"
#include "kiln/apps/faces.h"

namespace kiln {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

nlohmann::json record_json(const FaceRecord& r) {
  nlohmann::json line;
  line["image"] = r.image;
  line["image_index"] = r.image_index;
  if (!r.error.empty()) {
    line["error"] = r.error;
    return line;
  }
  const Face& f = *r.face;
  const float* b = f.detection.box;
  line["bbox"] = {b[0], b[1], b[0] + b[2], b[1] + b[3]};  // the predecessor's x0, y0, x1, y1
  line["orientation"] = r.orientation;
  line["det_score"] = f.detection.score;
  nlohmann::json marks = nlohmann::json::array();
  for (int k = 0; k < f.detection.landmark_count; ++k) marks.push_back({f.detection.landmarks[k][0], f.detection.landmarks[k][1]});
  line["landmarks"] = marks;
  line["face_size"] = f.face_size;
  line["scale"] = f.scale;
  line["enhancement_scale"] = f.enhancement_scale;
  line["quality"] = {{"blur", f.quality.blur},         {"brightness", f.quality.brightness},
                     {"contrast", f.quality.contrast}, {"sharpness", f.quality.sharpness},
                     {"overall_score", f.quality.score}};
  line["pose"] = {{"yaw", f.pose.yaw}, {"pitch", f.pose.pitch}, {"roll", f.pose.roll}};
  line["accepted"] = f.accepted;
  line["reasons"] = f.reasons;
  if (r.duplicate_of >= 0) {
    line["duplicate_of"] = r.duplicate_of;
    line["duplicate_cosine"] = r.duplicate_cosine;
  } else {
    line["row"] = r.row;
  }
  if (!r.crop_files.empty()) line["crops"] = r.crop_files;
  return line;
}

std::string settings_json(const FacesJobConfig& config) {
  nlohmann::json settings;
  for (const auto& entry : face_params().entries()) {
    const ParamValue value = entry.get(&config.face);
    std::visit([&](const auto& v) { settings[entry.spec.name] = v; }, value);
  }
  settings["dedup"] = config.dedup;
  settings["dedup_exact_faces"] = config.dedup_exact_faces;
  return settings.dump();
}

// What a resumed run must share with the killed one: the settings, the batches and the inputs.
std::string run_json(const FacesJobConfig& config, const ImageBatches& batches, int64_t unit) {
  nlohmann::json run;
  run["settings"] = nlohmann::json::parse(settings_json(config));
  run["crops"] = config.crops;
  run["margin"] = config.margin;
  run["batch_size"] = config.exec.batch_size;
  run["unit"] = unit;
  run["inputs"] = batches.count();
  run["inputs_crc32"] = batches.names_crc32();
  return run.dump();
}

// A piece writes {stem}.shard-I-of-N.h5 for kiln merge, which assembles what the piece cannot know alone: the output
// rows (so crop names) and the duplicates across pieces (so the JSON lines' row and duplicate_of fields).
Status piece_configure(const Shard& shard, FacesJobConfig* config) {
  if (config->output.empty() || std::filesystem::path(config->output).extension() != ".h5") {
    return invalid_argument(shard.source + ": a piece of a sharded faces job is written as .h5 (-o faces.h5), for kiln "
                            "merge");
  }
  if (!config->jsonl.empty() || !config->crops.empty()) {
    return invalid_argument(shard.source + ": --jsonl and --crops name faces by their row in the whole output, which "
                            "only kiln merge knows; run the pieces without them");
  }
  config->output = piece_path(config->output, shard);
  if (!config->preview.empty()) config->preview = piece_path(config->preview, shard);  // each piece its own sheet
  return Status::ok();
}

void counts_add(const FacesPartCounts& c, FacesJobSummary* s) {
  s->images += c.images;
  s->unreadable += c.unreadable;
  s->images_with_faces += c.images_with_faces;
  s->faces += c.faces;
  s->accepted += c.accepted;
  s->duplicates += c.duplicates;
  s->written += c.written;
}

// The outputs, from the parts: rows and paths into the tensor file, lines into the JSON lines file.
Status outputs_assemble(const FacesJobConfig& config, const FacesParts& parts, int64_t count,
                        const FacesJobSummary& summary, const Shard& shard, const ImageBatches& batches,
                        const ImageBatches& all_inputs, std::vector<nlohmann::json>* preview_records) {
  TensorWriter writer;
  if (!config.output.empty()) KILN_TRY(writer.open_arrays(config.output, faces_output_arrays(), PixelType::kF32));
  JsonLines json;
  if (!config.jsonl.empty()) KILN_TRY(json.open(config.jsonl));
  std::vector<std::string> row_paths;
  for (int64_t k = 0; k < count; ++k) {
    KILN_TRY_ASSIGN(const FacesPart part, parts.read(k));
    for (const std::string& line : part.lines) {
      nlohmann::json record = nlohmann::json::parse(line);
      if (!config.preview.empty() && record.at("image_index").get<int64_t>() < batches.offset() + config.preview_images) {
        preview_records->push_back(record);
      }
      json.write(std::move(record));
    }
    if (!writer.is_open()) continue;
    KILN_TRY(faces_rows_write(&writer, part.rows.data(), part.counts.written));
    row_paths.insert(row_paths.end(), part.paths.begin(), part.paths.end());
  }
  if (writer.is_open()) {
    TensorAttributes attributes = faces_output_attributes(settings_json(config), config.face, summary.images,
                                                          summary.duplicates);
    if (shard.is_piece()) {  // what kiln merge checks (kiln/scale.h)
      attributes.numbers.push_back({"shard_index", {static_cast<double>(shard.index)}});
      attributes.numbers.push_back({"shard_count", {static_cast<double>(shard.count)}});
      attributes.numbers.push_back({"first_image", {static_cast<double>(batches.offset())}});
      attributes.numbers.push_back({"job_images", {static_cast<double>(all_inputs.count())}});
      attributes.text.push_back({"job_inputs_crc32", all_inputs.names_crc32()});
    }
    KILN_TRY(writer.finish(row_paths, attributes));
  }
  return json.commit();
}

}  // namespace

TensorAttributes faces_output_attributes(const std::string& settings, const FaceSettings& face, int64_t images,
                                         int64_t duplicates) {
  TensorAttributes attributes;
  attributes.text = {{"settings", settings},
                     {"detector", face.detector},
                     {"embedder", face.embedder},
                     {"row", "one per kept face; box x, y, w, h and landmarks in the image's pixels"}};
  attributes.numbers = {{"images", {static_cast<double>(images)}}, {"duplicates", {static_cast<double>(duplicates)}}};
  return attributes;
}

const ParamTable<FacesJobConfig>& faces_job_params() {
  static const ParamTable<FacesJobConfig> table = [] {
    using C = FacesJobConfig;
    ParamTable<C> t;
    t.add({.name = "output", .help = "Write one row per kept face here (.h5 or .npz)"},
          [](C& c) -> std::string& { return c.output; });
    t.add({.name = "jsonl", .help = "Write one JSON record per face and per unreadable image here"},
          [](C& c) -> std::string& { return c.jsonl; });
    t.add({.name = "dedup",
           .help = "Drop a face whose cosine similarity to a face already kept is at least this (0.7 = the "
                   "predecessor's cache); 0 = keep every face",
           .min = 0, .max = 1},
          [](C& c) -> double& { return c.dedup; });
    t.add({.name = "dedup_exact_faces",
           .help = "Dedup: search the kept faces exactly until there are this many, then through an HNSW graph "
                   "(about logarithmic per face instead of linear; its recall is in docs/benchmarks.md)",
           .min = 1},
          [](C& c) -> int64_t& { return c.dedup_exact_faces; });
    t.add({.name = "crops",
           .help = "Write each kept face's crop (with the margin), 150 x 150 thumbnail (JPEG q95) and aligned 112 x "
                   "112 face (PNG) into this folder, named by the face's row"},
          [](C& c) -> std::string& { return c.crops; });
    t.add({.name = "preview",
           .help = "Write a PNG contact sheet of the first images here: each face's box and landmarks on its photo, "
                   "in the colour of its verdict (kept, rejected and why, duplicate of which row)"},
          [](C& c) -> std::string& { return c.preview; });
    t.add({.name = "preview_images", .help = "Images on the --preview sheet", .min = 1, .max = 1000},
          [](C& c) -> int64_t& { return c.preview_images; });
    t.add({.name = "margin", .help = "Crops: add this fraction of the box's width and height on each side",
           .min = 0, .max = 4},
          [](C& c) -> double& { return c.margin; });
    t.add({.name = "resume", .help = "Continue a killed run of the same job (its parts are beside the output)"},
          [](C& c) -> bool& { return c.resume; });
    t.add({.name = "lanes",
           .help = "Face analyzers at once, each with its share of the threads; on the CPU they take the batches' "
                   "photos one at a time (ONNX Runtime splits a small batch over threads badly, and its CPU kernels "
                   "are slower per photo on big batches); 0 = one per thread on the CPU, else 1",
           .min = 0, .max = 256},
          [](C& c) -> int32_t& { return c.lanes; });
    t.include(face_params(), [](C& c) -> FaceSettings& { return c.face; });
    file_job_params_add(t);
    t.include(shard_params(), [](C& c) -> ShardSettings& { return c.shard; });
    return t;
  }();
  return table;
}

Result<FacesJobSummary> faces_job_run(const FacesJobConfig& requested, const ImageInputs& inputs,
                                      const std::function<void(const FaceRecord&)>& on_record,
                                      const std::function<void(int64_t, int64_t)>& on_progress, const LogFn& log) {
  KILN_TRY_ASSIGN(const Shard shard, shard_resolve(requested.shard, env_lookup_process));
  FacesJobConfig config = requested;
  if (shard.is_piece()) KILN_TRY(piece_configure(shard, &config));
  if (config.output.empty() && config.jsonl.empty()) return invalid_argument("faces: give -o and/or --jsonl");
  if (config.jsonl == "-") return invalid_argument("faces: " + kJsonLinesNotOnStdout);
  if (!config.output.empty()) {
    KILN_TRY_ASSIGN(const TensorFileFormat format, tensor_file_format_from_path(config.output));
    if (format == TensorFileFormat::kNpy) {
      return invalid_argument("faces: the output holds several arrays: use .h5 or .npz");
    }
  }
  KILN_TRY_ASSIGN(const ImageBatches all_inputs, ImageBatches::make(inputs));
  const IndexRange range = shard.is_piece() ? shard_range(shard.index, shard.count, all_inputs.count())
                                            : IndexRange{0, all_inputs.count()};
  const ImageBatches batches = all_inputs.range(range.first, range.count);
  if (shard.is_piece() && log) {
    log("Analyzing " + shard.label() + " (" + shard.source + "): images " + std::to_string(range.first) + ".." +
        std::to_string(range.end() - 1) + " of " + std::to_string(all_inputs.count()) + " into " + config.output);
  }
  const auto started = Clock::now();
  const std::string base = config.output.empty() ? config.jsonl : config.output;
  KILN_TRY_ASSIGN(OutputLock lock, OutputLock::acquire(base));
  const int64_t batch_size = std::max<int64_t>(1, config.exec.batch_size);
  const int64_t unit = part_unit_images(batch_size, 32);
  const std::string run = run_json(config, batches, unit);
  FacesParts parts(base, faces_row_floats());
  // A piece keeps every face: kiln merge drops the duplicates across all pieces, in input order, as one run would.
  std::unique_ptr<FaceDedup> dedup;
  if (config.dedup > 0 && !shard.is_piece()) {
    dedup = std::make_unique<FaceDedup>(static_cast<float>(config.dedup), config.dedup_exact_faces);
  }

  // A resumed run keeps the parts of the killed one and continues after them.
  FacesJobSummary summary;
  std::vector<std::string> notes;
  KILN_TRY_ASSIGN(const std::vector<FacesPart> kept, parts.open(run, config.resume, &notes));
  for (const std::string& note : notes) {
    if (log) log("kiln: warning: " + note);
  }
  for (const FacesPart& part : kept) {
    counts_add(part.counts, &summary);
    for (int64_t r = 0; dedup && r < part.counts.written; ++r) dedup->add(part.rows.data() + r * faces_row_floats());
  }
  int64_t done_parts = static_cast<int64_t>(kept.size());
  if (!config.crops.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(config.crops, ec);
    if (ec) return io_error(config.crops + ": cannot create: " + ec.message());
  }

  FaceSettings face_settings = config.face;
  face_settings.keep_aligned = !config.crops.empty();
  // Decoded batches started on the lanes, oldest first: declared before the lanes, which wait for theirs on every
  // way out.
  std::deque<DecodedBatch> in_lanes;
  const FaceStageModes stages = config.stages.value_or(face_stage_modes_all(config.exec.mode));
  KILN_TRY_ASSIGN(std::unique_ptr<FaceLanes> lanes,
                  FaceLanes::open(face_settings, config.exec, stages,
                                  config.lanes > 0 ? config.lanes : face_lanes_auto(config.exec, stages), log));
  ThreadPool decode_pool(config.exec.threads);
  DecodeOptions decode = file_job_decode_options(config, 3);

  // The next batch decodes while this one is analyzed (the future is destroyed, waiting, before what it uses).
  const auto decode_async = [&batches, &decode, &decode_pool, batch_size](int64_t first) {
    return std::async(std::launch::async, [&batches, &decode, &decode_pool, batch_size, first] {
      return batches.take(first, std::min(batch_size, batches.count() - first), decode, &decode_pool);
    });
  };
  std::future<DecodedBatch> next;
  int64_t next_first = done_parts * unit;  // the next batch to decode (parts hold whole batches)
  if (next_first < batches.count()) next = decode_async(next_first);
  // Every lane busy: the batches decoded next started, one per lane (one with no readable image is only held).
  const auto start_more = [&]() -> Status {
    while (next.valid() && static_cast<int64_t>(in_lanes.size()) < lanes->batches_at_once()) {
      auto t = Clock::now();
      in_lanes.push_back(next.get());
      next_first += batch_size;
      if (next_first < batches.count()) next = decode_async(next_first);
      summary.decode_seconds += seconds_since(t);
      t = Clock::now();
      if (in_lanes.back().images.count() > 0) KILN_TRY(lanes->start(in_lanes.back().images.view()));
      summary.analyze_seconds += seconds_since(t);  // one lane analyses in start()
    }
    return Status::ok();
  };
  for (int64_t part_index = done_parts; part_index * unit < batches.count(); ++part_index) {
    FacesPart part;
    part.first = part_index * unit;
    const int64_t part_end = std::min(batches.count(), part.first + unit);
    for (int64_t first = part.first; first < part_end; first += batch_size) {
      const int64_t n = std::min(batch_size, part_end - first);
      KILN_TRY(start_more());
      auto t = Clock::now();
      std::vector<std::vector<Face>> faces;
      if (in_lanes.front().images.count() > 0) KILN_TRY(lanes->finish(&faces));
      const DecodedBatch batch = std::move(in_lanes.front());
      in_lanes.pop_front();
      summary.analyze_seconds += seconds_since(t);
      t = Clock::now();
      for (int64_t i = 0; i < n; ++i) {
        FaceRecord record;
        record.image = batches.name(first + i);
        record.image_index = batches.offset() + first + i;
        const int64_t k = batch.index[static_cast<size_t>(i)];
        ++part.counts.images;
        if (k < 0) {
          record.error = batch.status[static_cast<size_t>(i)].message();
          ++part.counts.unreadable;
          part.lines.push_back(record_json(record).dump());
          if (on_record) on_record(record);
          continue;
        }
        record.orientation = batch.buffers[static_cast<size_t>(k)].orientation;
        const std::vector<Face>& image_faces = faces[static_cast<size_t>(k)];
        part.counts.images_with_faces += image_faces.empty() ? 0 : 1;
        for (const Face& face : image_faces) {
          ++part.counts.faces;
          FaceRecord r = record;
          r.face = &face;
          if (dedup) r.duplicate_of = dedup->check_and_add(face.embedding.data(), &r.duplicate_cosine);
          if (r.duplicate_of >= 0) {
            ++part.counts.duplicates;
          } else {
            r.row = summary.written + part.counts.written++;
            part.counts.accepted += face.accepted ? 1 : 0;
            face_row_append(face, record.image_index, &part.rows);
            part.paths.push_back(record.image);
            if (!config.crops.empty()) {
              KILN_TRY_ASSIGN(r.crop_files,
                              face_crops_write(config.crops, r.row, batch.images[k], face, config.margin));
            }
          }
          part.lines.push_back(record_json(r).dump());
          if (on_record) on_record(r);
        }
      }
      summary.write_seconds += seconds_since(t);
      if (on_progress) on_progress(first + n, batches.count());
    }
    const auto t = Clock::now();
    KILN_TRY(parts.write(part_index, part));
    summary.write_seconds += seconds_since(t);
    counts_add(part.counts, &summary);
    ++done_parts;
  }
  if (summary.images > 0 && summary.unreadable == summary.images && !shard.is_piece()) {
    (void)parts.remove();
    return io_error("none of the " + std::to_string(summary.images) + " images could be read");
  }
  const auto t = Clock::now();
  std::vector<nlohmann::json> preview_records;
  KILN_TRY(outputs_assemble(config, parts, done_parts, summary, shard, batches, all_inputs, &preview_records));
  if (!config.preview.empty()) {
    KILN_TRY(faces_preview_write(config.preview, preview_records, batches, config.preview_images, decode).status());
  }
  KILN_TRY(parts.remove());
  summary.write_seconds += seconds_since(t);
  summary.stages = lanes->report();
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace kiln
