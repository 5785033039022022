// A job's JSON lines file (one record per input): written to a temporary file beside it and committed at the end,
// removed if the job fails, so a reader never sees half a run.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/status.h"

namespace kiln {

// Why "-" is refused as a JSON lines path.
inline const std::string kJsonLinesNotOnStdout =
    "JSON lines to standard output (-) are not supported: the file is committed whole when the run ends, so that a "
    "killed run leaves none half written; give a file path";

class JsonLines {
 public:
  ~JsonLines();
  Status open(const std::string& path);
  void write(const nlohmann::json& line);
  void write_line(const std::string& line);  // one record already dumped as JSON
  Status commit();
  bool is_open() const { return m_out.is_open(); }

 private:
  std::string m_path;
  std::string m_tmp;
  std::ofstream m_out;
};

}  // namespace kiln
