// The packaged models: <model dir>/catalog.json, written by tools/models/prepare_models.py.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "kiln/infer.h"

#ifndef KILN_MODEL_DIR
#define KILN_MODEL_DIR ""
#endif

namespace kiln {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFetchCommand = "make deps (or: python3 tools/deps/fetch_deps.py && python3 tools/models/prepare_models.py)";

// <prefix>/share/kiln/models of an installed kiln: looked for above the running program (bin/kiln) and above the
// file this code was loaded from (the Python module in lib/python3/dist-packages/kiln/).
std::string installed_model_dir() {
  std::vector<fs::path> origins;
  std::error_code ec;
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) origins.push_back(exe);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&model_dir), &info) != 0 && info.dli_fname != nullptr) {
    origins.push_back(fs::absolute(info.dli_fname, ec));
  }
  for (const fs::path& origin : origins) {
    fs::path dir = origin.parent_path();
    for (int up = 0; up < 5 && !dir.empty(); ++up, dir = dir.parent_path()) {
      const fs::path candidate = dir / "share" / "kiln" / "models";
      if (fs::is_regular_file(candidate / "catalog.json", ec)) return candidate.string();
      if (dir == dir.parent_path()) break;
    }
  }
  return "";
}

PackagedModel model_from_json(const nlohmann::json& j, const std::string& dir) {
  PackagedModel m;
  m.name = j.at("name");
  m.task = j.value("task", "");
  m.file = (fs::path(dir) / j.at("file").get<std::string>()).string();
  m.licence = j.value("licence", "");
  m.source = j.value("source", "");
  m.bytes = j.value("bytes", int64_t{0});
  m.sha256 = j.value("sha256", "");
  const auto& in = j.at("input");
  m.input.name = in.value("name", "");
  m.input.layout = in.value("layout", "nchw");
  m.input.width = in.value("width", 0);
  m.input.height = in.value("height", 0);
  m.input.bgr = in.value("bgr", false);
  m.input.scale = in.value("scale", 1.0f);
  m.input.mean = in.value("mean", std::vector<float>{});
  m.input.std = in.value("std", std::vector<float>{});
  for (const auto& o : j.at("outputs")) m.outputs.push_back({o.at("name"), o.value("meaning", "")});
  return m;
}

}  // namespace

std::string model_dir() {
  if (const char* env = std::getenv("KILN_MODELS"); env && *env) return env;
  if (std::string installed = installed_model_dir(); !installed.empty()) return installed;
  return KILN_MODEL_DIR;
}

Result<std::vector<PackagedModel>> packaged_models() {
  const std::string dir = model_dir();
  const std::string path = (fs::path(dir) / "catalog.json").string();
  std::ifstream in(path);
  if (!in) return io_error("packaged models: " + path + " is missing; fetch and build them with " + kFetchCommand);
  std::vector<PackagedModel> models;
  try {
    const auto j = nlohmann::json::parse(in);
    for (const auto& entry : j.at("models")) models.push_back(model_from_json(entry, dir));
  } catch (const nlohmann::json::exception& e) {
    return io_error("packaged models: " + path + " cannot be read: " + e.what());
  }
  return models;
}

Result<PackagedModel> packaged_model(const std::string& name) {
  auto models = packaged_models();
  if (!models.is_ok()) return models.status();
  std::string names;
  for (const auto& m : models.value()) {
    if (m.name == name) {
      std::error_code ec;
      if (!fs::is_regular_file(m.file, ec)) {
        return io_error("model " + name + ": " + m.file + " is missing; fetch and build it with " + kFetchCommand);
      }
      if (m.bytes > 0 && static_cast<int64_t>(fs::file_size(m.file, ec)) != m.bytes) {
        return io_error("model " + name + ": " + m.file + " is not the file the catalog describes (" +
                        std::to_string(m.bytes) + " bytes); rebuild it with " + kFetchCommand);
      }
      return m;
    }
    names += (names.empty() ? "" : ", ") + m.name;
  }
  return invalid_argument("no packaged model named '" + name + "' (packaged: " + names + "; or give a path to an .onnx file)");
}

Result<std::string> model_path_resolve(const std::string& name_or_path) {
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".onnx") ||
      fs::exists(name_or_path, ec)) {
    return name_or_path;
  }
  auto model = packaged_model(name_or_path);
  if (!model.is_ok()) return model.status();
  return model.value().file;
}

}  // namespace kiln
