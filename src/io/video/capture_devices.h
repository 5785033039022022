// Capture devices (/dev/video*) through libavdevice, loaded only when one is opened: libavdevice brings some 70
// libraries (X11, SDL, PulseAudio, ...) that every start of kiln and its Python module would otherwise load for
// nothing (kiln's start went from 0.13-0.18 s to 0.11 s: docs/benchmarks.md §12).
#pragma once

#include "kiln/status.h"

namespace kiln {

// Loads libavdevice and registers its devices with libavformat (once per process); an error names the library and
// why it could not be loaded.
Status capture_devices_register();

}  // namespace kiln
