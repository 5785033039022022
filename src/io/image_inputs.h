// Collecting the input images of a command: files as given, folders searched recursively for .jpg/.jpeg/.png
// (any case, sorted by path), and list files (one path per line, '#' starts a comment, blank lines ignored,
// relative paths taken relative to the list file's folder).
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// True for .jpg, .jpeg and .png, in any case.
bool image_path_is_image(const std::string& path);

// Image files under `dir` (recursive), sorted. IoError when the folder cannot be read.
Result<std::vector<std::string>> image_inputs_folder(const std::string& dir);

// The entries of a list file, in order (folders in it are expanded like arguments). IoError when it cannot be
// read.
Result<std::vector<std::string>> image_inputs_list(const std::string& list_path);

// Expands command-line inputs in order: "@FILE" is a list file, a folder is searched, anything else is taken as
// a file path as is (a missing file is reported later, when it is decoded).
Result<std::vector<std::string>> image_inputs_collect(const std::vector<std::string>& args);

}  // namespace kiln
