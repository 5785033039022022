// The web page's routes, its HTML and its style (its script: serve_page_script.cpp).
#include "apps/serve/serve_page.h"

#include "apps/serve/serve_routes.h"

namespace kiln::serve {

namespace {

// Only the server's own origin: no outside script, style, image, font or connection; blob: for the photos and clips
// the page draws from the user's files.
constexpr const char* kPagePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

HttpResponse page_file(const char* content_type, const char* body) {
  HttpResponse response;
  response.content_type = content_type;
  response.body = body;
  response.headers.emplace_back("Content-Security-Policy", kPagePolicy);
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Referrer-Policy", "no-referrer");
  response.headers.emplace_back("Cache-Control", "no-cache");
  return response;
}

}  // namespace

const std::vector<std::string>& page_paths() {
  static const std::vector<std::string> paths = {"/", "/page.js", "/page.css"};
  return paths;
}

void page_routes_add(ServeContext&, std::vector<Route>* routes) {
  routes->push_back({"GET", "/", [](const HttpRequest&, const RouteParams&, Responder respond) {
                       respond(page_file("text/html; charset=utf-8", page_html()));
                     }});
  routes->push_back({"GET", "/page.js", [](const HttpRequest&, const RouteParams&, Responder respond) {
                       respond(page_file("text/javascript; charset=utf-8", page_script()));
                     }});
  routes->push_back({"GET", "/page.css", [](const HttpRequest&, const RouteParams&, Responder respond) {
                       respond(page_file("text/css; charset=utf-8", page_style()));
                     }});
}

const char* page_html() {
  return R"kiln(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kiln serve</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/page.css">
<script src="/page.js" defer></script>
</head>
<body>
<header>
  <h1>kiln serve</h1>
  <label>Token <input id="token" type="password" autocomplete="off" placeholder="if the server has --token"></label>
  <span id="status" role="status"></span>
</header>
<main>
  <section id="faces" class="drop">
    <h2>Faces</h2>
    <p>Drop photos here, or <label class="pick">choose them<input id="face-files" type="file" accept="image/*"
      multiple></label>. Each goes to <code>POST /v1/faces</code>; a box is green when the face is accepted, red when
      it is rejected (the reasons below the photo).</p>
    <div id="face-results" class="results"></div>
  </section>
  <section id="segment" class="drop">
    <h2>Person mask</h2>
    <p>Drop a picture or a short clip here, or <label class="pick">choose one<input id="segment-files" type="file"
      accept="image/*,video/*"></label>. A picture goes to <code>POST /v1/segment</code>; a clip is played frame by
      frame (4 per second, 10 seconds at most) and each frame sent. The mask is overlaid in magenta.</p>
    <div id="segment-results" class="results"></div>
  </section>
  <section id="metrics">
    <h2>Live metrics</h2>
    <canvas id="metrics-chart" width="720" height="220"></canvas>
    <p class="legend"><span class="rps">requests/s</span> (page polls of /metrics left out) and
      <span class="queue">mean queue time, ms</span>, from <code>GET /metrics</code> every second.</p>
  </section>
</main>
</body>
</html>
)kiln";
}

const char* page_style() {
  return R"kiln(body { font: 15px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #f6f6f4; }
header { display: flex; gap: 1.5em; align-items: center; padding: 0.6em 1.2em; background: #2b2b2b; color: #fff; }
header h1 { font-size: 1.2em; margin: 0; }
header input { width: 16em; }
#status { color: #ffcf70; }
main { padding: 0.5em 1.2em 2em; max-width: 1100px; }
section { background: #fff; border: 1px solid #ddd; border-radius: 8px; padding: 0.4em 1em 1em; margin: 1em 0; }
section.drop.over { border: 2px dashed #3b7ddd; background: #eef4ff; }
h2 { font-size: 1.05em; }
.pick { color: #2a62c9; text-decoration: underline; cursor: pointer; }
.pick input { display: none; }
.results { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; max-width: 520px; }
figure canvas { max-width: 100%; height: auto; border: 1px solid #ccc; }
figcaption { font-size: 0.9em; }
figcaption ul { margin: 0.2em 0; padding-left: 1.2em; }
.accepted { color: #1a7f37; }
.rejected { color: #c62828; }
.error { color: #c62828; }
#metrics-chart { width: 100%; max-width: 720px; border: 1px solid #ccc; }
.legend .rps { color: #2a62c9; }
.legend .queue { color: #e07b00; }
)kiln";
}

}  // namespace kiln::serve
