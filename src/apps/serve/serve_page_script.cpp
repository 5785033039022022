// The web page's script: photos to POST /v1/faces, drawn with their boxes; a picture or a clip's frames to
// POST /v1/segment, drawn with the mask over them; /metrics polled every second into a chart. What is drawn is also
// written into the page (data-state, data-boxes, data-frames, data-series) so that a test can read it back.
#include "apps/serve/serve_page.h"

namespace kiln::serve {

const char* page_script() {
  return R"kiln("use strict";
const $ = (id) => document.getElementById(id);
const ACCEPTED = "#1a9e3f", REJECTED = "#d62728";

function authorization() {
  const token = $("token").value.trim();
  return token ? { Authorization: "Bearer " + token } : {};
}

function say(text) { $("status").textContent = text; }

async function post(path, body) {
  const response = await fetch(path, { method: "POST", body, headers: authorization() });
  if (!response.ok) {
    let message = String(response.status);
    try { message += ": " + (await response.json()).error; } catch (ignored) { /* not JSON */ }
    if (response.status === 401) say("this server needs its token (the field above)");
    throw new Error(message);
  }
  return response;
}

// A figure for one file: its canvas and caption; data-state goes pending -> done | error.
function figureAdd(container, name) {
  const figure = document.createElement("figure");
  figure.dataset.file = name;
  figure.dataset.state = "pending";
  const canvas = document.createElement("canvas");
  const caption = document.createElement("figcaption");
  caption.textContent = name + ": working...";
  figure.append(canvas, caption);
  container.append(figure);
  return { figure, canvas, caption };
}

function failed(view, name, error) {
  view.figure.dataset.state = "error";
  view.figure.dataset.error = error.message;
  view.caption.textContent = name + ": " + error.message;
  view.caption.className = "error";
}

// --- faces ---

function boxesDraw(canvas, bitmap, boxes) {
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  const context = canvas.getContext("2d");
  context.drawImage(bitmap, 0, 0);
  const line = Math.max(2, Math.round(Math.max(bitmap.width, bitmap.height) / 250));
  context.lineWidth = line;
  context.font = `${6 * line}px system-ui, sans-serif`;
  boxes.forEach((face, i) => {
    const [x, y, w, h] = face.box;
    context.strokeStyle = context.fillStyle = face.accepted ? ACCEPTED : REJECTED;
    context.strokeRect(x, y, w, h);
    context.fillText(String(i + 1), x + line, Math.max(6 * line, y - line));
  });
}

function verdictsList(boxes) {
  const list = document.createElement("ul");
  boxes.forEach((face, i) => {
    const item = document.createElement("li");
    item.className = face.accepted ? "accepted" : "rejected";
    item.textContent = `${i + 1}: ` + (face.accepted ? "accepted" : "rejected: " + face.reasons.join("; "));
    list.append(item);
  });
  return list;
}

async function faceFile(file) {
  const view = figureAdd($("face-results"), file.name);
  try {
    const [answer, bitmap] = await Promise.all([post("/v1/faces", file).then((r) => r.json()),
                                                createImageBitmap(file)]);
    const boxes = answer.faces.map((f) => ({ box: f.box, accepted: f.accepted, reasons: f.reasons,
                                             score: f.det_score }));
    boxesDraw(view.canvas, bitmap, boxes);
    view.figure.dataset.width = bitmap.width;
    view.figure.dataset.height = bitmap.height;
    view.figure.dataset.boxes = JSON.stringify(boxes);
    view.caption.textContent = `${file.name}: ${boxes.length} face${boxes.length === 1 ? "" : "s"} ` +
                               `(${answer.processing_time_ms.toFixed(0)} ms)`;
    view.caption.append(verdictsList(boxes));
    view.figure.dataset.state = "done";
  } catch (error) {
    failed(view, file.name, error);
  }
}

// --- person masks ---

// The picture (an ImageBitmap or a canvas) with the mask (255 = person) over it in translucent magenta; the share
// of person pixels.
function maskOverlay(canvas, picture, mask) {
  const width = picture.width, height = picture.height;
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext("2d");
  context.drawImage(picture, 0, 0);
  const layer = document.createElement("canvas");
  layer.width = width;
  layer.height = height;
  const layerContext = layer.getContext("2d");
  layerContext.drawImage(mask, 0, 0, width, height);
  const pixels = layerContext.getImageData(0, 0, width, height);
  let person = 0;
  for (let p = 0; p < pixels.data.length; p += 4) {
    const inside = pixels.data[p] > 127;
    person += inside;
    pixels.data[p] = 255; pixels.data[p + 1] = 0; pixels.data[p + 2] = 200;
    pixels.data[p + 3] = inside ? 110 : 0;
  }
  layerContext.putImageData(pixels, 0, 0);
  context.drawImage(layer, 0, 0);
  return person / (width * height);
}

async function maskOf(blob) {
  return createImageBitmap(await (await post("/v1/segment", blob)).blob());
}

async function segmentPicture(file, view) {
  const [mask, bitmap] = await Promise.all([maskOf(file), createImageBitmap(file)]);
  const share = maskOverlay(view.canvas, bitmap, mask);
  view.figure.dataset.person = share.toFixed(4);
  view.caption.textContent = `${file.name}: person ${(100 * share).toFixed(1)}% of the picture`;
}

function once(target, event) {
  return new Promise((resolve, reject) => {
    target.addEventListener(event, resolve, { once: true });
    target.addEventListener("error", () => reject(new Error("the browser cannot play this clip")), { once: true });
  });
}

async function segmentClip(file, view) {
  const video = document.createElement("video");
  video.muted = true;
  video.preload = "auto";
  video.src = URL.createObjectURL(file);
  try {
    await once(video, "loadeddata");
    const frames = Math.max(1, Math.min(40, Math.floor(video.duration * 4)));
    const grab = document.createElement("canvas");
    grab.width = video.videoWidth;
    grab.height = video.videoHeight;
    const grabContext = grab.getContext("2d");
    for (let i = 0; i < frames; ++i) {
      video.currentTime = i / 4;
      await once(video, "seeked");
      grabContext.drawImage(video, 0, 0);
      const frame = await new Promise((resolve) => grab.toBlob(resolve, "image/jpeg", 0.92));
      const share = maskOverlay(view.canvas, grab, await maskOf(frame));
      view.figure.dataset.frames = i + 1;
      view.caption.textContent = `${file.name}: frame ${i + 1} of ${frames}, person ${(100 * share).toFixed(1)}%`;
    }
  } finally {
    URL.revokeObjectURL(video.src);
  }
}

async function segmentFile(file) {
  const view = figureAdd($("segment-results"), file.name);
  try {
    await (file.type.startsWith("video/") ? segmentClip(file, view) : segmentPicture(file, view));
    view.figure.dataset.state = "done";
  } catch (error) {
    failed(view, file.name, error);
  }
}

// --- live metrics ---

const samples = [];  // {rps, queue_ms} per second, the last 60
let previous = null;

// Requests answered (all routes but /metrics) and the queue-time histograms' sums and counts (all models).
function metricsParse(text) {
  const totals = { requests: 0, queueSum: 0, queueCount: 0 };
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    const series = line.slice(0, space), value = Number(line.slice(space + 1));
    const name = series.split("{")[0];
    if (name === "kiln_serve_requests_total" && !series.includes('route="/metrics"')) totals.requests += value;
    else if (name === "kiln_serve_queue_seconds_sum") totals.queueSum += value;
    else if (name === "kiln_serve_queue_seconds_count") totals.queueCount += value;
  }
  return totals;
}

function chartLine(context, values, top, color, width, height) {
  context.strokeStyle = color;
  context.lineWidth = 2;
  context.beginPath();
  values.forEach((v, i) => {
    const x = 40 + (width - 80) * (i / 59), y = height - 20 - (height - 40) * (v / top);
    if (i === 0) context.moveTo(x, y); else context.lineTo(x, y);
  });
  context.stroke();
}

function chartDraw() {
  const canvas = $("metrics-chart");
  const context = canvas.getContext("2d");
  const width = canvas.width, height = canvas.height;
  context.clearRect(0, 0, width, height);
  context.strokeStyle = "#ccc";
  context.strokeRect(40, 20, width - 80, height - 40);
  const rps = samples.map((s) => s.rps), queue = samples.map((s) => s.queue_ms);
  const rpsTop = Math.max(1, ...rps) * 1.1, queueTop = Math.max(1, ...queue) * 1.1;
  chartLine(context, rps, rpsTop, "#2a62c9", width, height);
  chartLine(context, queue, queueTop, "#e07b00", width, height);
  context.font = "12px system-ui, sans-serif";
  context.fillStyle = "#2a62c9";
  context.fillText(rpsTop.toFixed(1) + " req/s", 2, 14);
  context.fillStyle = "#e07b00";
  context.fillText(queueTop.toFixed(1) + " ms", width - 70, 14);
  canvas.dataset.samples = samples.length;
  canvas.dataset.series = JSON.stringify(samples);
}

async function metricsPoll() {
  try {
    const response = await fetch("/metrics", { headers: authorization() });
    if (!response.ok) {
      if (response.status === 401) say("this server needs its token (the field above)");
      return;
    }
    const totals = metricsParse(await response.text());
    const now = performance.now() / 1000;
    if (previous) {
      const seconds = Math.max(1e-3, now - previous.now);
      const count = totals.queueCount - previous.queueCount;
      samples.push({ rps: Math.max(0, totals.requests - previous.requests) / seconds,
                     queue_ms: count > 0 ? 1000 * (totals.queueSum - previous.queueSum) / count : 0 });
      if (samples.length > 60) samples.shift();
      chartDraw();
    }
    previous = { now, ...totals };
    if ($("status").textContent.includes("token")) say("");
  } catch (error) {
    say("metrics: " + error.message);
  }
}

// --- wiring ---

function dropZone(section, take) {
  section.addEventListener("dragover", (event) => { event.preventDefault(); section.classList.add("over"); });
  section.addEventListener("dragleave", () => section.classList.remove("over"));
  section.addEventListener("drop", (event) => {
    event.preventDefault();
    section.classList.remove("over");
    for (const file of event.dataTransfer.files) take(file);
  });
}

window.addEventListener("DOMContentLoaded", () => {
  const token = $("token");
  token.value = sessionStorage.getItem("kiln-token") || "";
  token.addEventListener("change", () => sessionStorage.setItem("kiln-token", token.value));
  $("face-files").addEventListener("change", (event) => {
    for (const file of event.target.files) faceFile(file);
    event.target.value = "";
  });
  $("segment-files").addEventListener("change", (event) => {
    for (const file of event.target.files) segmentFile(file);
    event.target.value = "";
  });
  dropZone($("faces"), faceFile);
  dropZone($("segment"), segmentFile);
  metricsPoll();
  setInterval(metricsPoll, 1000);
});
)kiln";
}

}  // namespace kiln::serve
