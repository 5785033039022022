// The image-ops library: every op family, batched on every backend. See docs/ops/.
#pragma once

#include "kiln/exec.h"
#include "kiln/ops/color.h"
#include "kiln/ops/enhance.h"
#include "kiln/ops/mask.h"
#include "kiln/ops/normalize.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/quality.h"
#include "kiln/ops/resize.h"
#include "kiln/ops/warp.h"
