// kiln serve's web page (GET /): plain HTML, CSS and JavaScript compiled into the binary, nothing fetched from
// elsewhere (its Content-Security-Policy forbids it). The page is public, since a browser cannot add a header to a
// page load; it asks for the token and its script sends it with every call (Authorization: Bearer).
#pragma once

#include <string>
#include <vector>

namespace kiln::serve {

// The page's own files: "/", "/page.js", "/page.css" (served without a token).
const std::vector<std::string>& page_paths();

const char* page_html();
const char* page_style();
const char* page_script();

}  // namespace kiln::serve
