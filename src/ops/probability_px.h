/* Per-pixel math of the probability family (C subset; see kernel_defs.h), shared verbatim by the CPU, CUDA and
 * OpenCL, and by kiln segment's host path (segment_model.cpp, mask_temporal.cpp), so a map is the same bits
 * wherever it was made.
 *
 * The person probability of pixel (x, y): sigmoid(clamp(l, -50, 50)), or softmax as 1 / sum_j exp(l_j - l_person)
 * in channel order, or the value itself; NaN and inf become 0 (background), the rest is clamped to [0, 1]. exp and
 * log2 are kiln_expf / kiln_log2f (+, -, *, / and exponent bits only). Temporal smoothing moves the new p towards the
 * previous smoothed s: s' = p + (s - p) * (H(q)^2 * ratio), q = round(p * 4096) / 4096. */
#ifndef KILN_OPS_PROBABILITY_PX_H
#define KILN_OPS_PROBABILITY_PX_H

#include "ops/image_px.h"

#define KILN_PROB_ACT_SIGMOID 0
#define KILN_PROB_ACT_SOFTMAX 1
#define KILN_PROB_ACT_NONE 2
#define KILN_PROB_UNCERTAINTY_STEPS 4096

/* Resolved parameters of one call (the same on every backend; passed by value to kernels). */
typedef struct KilnProbabilityParams {
  int32_t activation; /* KILN_PROB_ACT_* */
  int32_t channel;
  int32_t smooth;     /* 1: the output holds the previous smoothed map */
  float temporal;
} KilnProbabilityParams;

/* A probability as kiln keeps it: NaN and inf are background, the rest clamped to [0, 1]. */
KILN_KERNEL_FN float kiln_prob_clean(float v) {
  if (!(v - v == 0.0f)) return 0.0f;
  return kiln_clampf(v, 0.0f, 1.0f);
}

/* A single value through the sigmoid (sigmoid != 0) or as it is. */
KILN_KERNEL_FN float kiln_prob_of_value(float v, int32_t sigmoid) {
  if (!sigmoid) return kiln_prob_clean(v);
  if (v != v) return 0.0f;
  return kiln_prob_clean(1.0f / (1.0f + kiln_expf(-kiln_clampf(v, -50.0f, 50.0f))));
}

/* The person probability of pixel (x, y) of a model output. */
KILN_KERNEL_FN float kiln_prob_at(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y,
                                  KilnProbabilityParams p) {
  const float l = kiln_px_load(base, d, x, y, p.channel);
  if (p.activation != KILN_PROB_ACT_SOFTMAX) return kiln_prob_of_value(l, p.activation == KILN_PROB_ACT_SIGMOID);
  float sum = 0.0f;
  for (int32_t c = 0; c < d.channels; ++c) {
    const float diff = c == p.channel ? 0.0f : kiln_px_load(base, d, x, y, c) - l;
    sum = sum + kiln_expf(diff);
  }
  return kiln_prob_clean(1.0f / sum);
}

/* H(q)^2, H the binary entropy in bits: 1 at q = 0.5, 0 at q = 0 or 1. */
KILN_KERNEL_FN float kiln_prob_uncertainty(float q) {
  if (!(q > 0.0f && q < 1.0f)) return 0.0f;
  const float h = -(q * kiln_log2f(q) + (1.0f - q) * kiln_log2f(1.0f - q));
  return h * h;
}

/* The uncertainty weight of p in [0, 1], at p rounded to 1/4096 (the CPU reads it from a table of these values). */
KILN_KERNEL_FN float kiln_prob_uncertainty_step(int32_t step) {
  return kiln_prob_uncertainty((float)step * (1.0f / (float)KILN_PROB_UNCERTAINTY_STEPS));
}
KILN_KERNEL_FN int32_t kiln_prob_step_of(float p) { return (int32_t)(p * (float)KILN_PROB_UNCERTAINTY_STEPS + 0.5f); }

/* The smoothed value of a new probability p (clean) given the previous smoothed s and uncertainty weight u. */
KILN_KERNEL_FN float kiln_prob_smooth(float p, float s, float u, float ratio) { return p + (s - p) * (u * ratio); }

/* Output pixel (x, y): the probability, smoothed into the previous map `prev` (the output's own pixel) when asked. */
KILN_KERNEL_FN float kiln_prob_output(KILN_GLOBAL const uint8_t* base, KilnImageDesc d, int32_t x, int32_t y,
                                      KilnProbabilityParams p, float prev) {
  const float v = kiln_prob_at(base, d, x, y, p);
  if (!p.smooth) return v;
  return kiln_prob_smooth(v, prev, kiln_prob_uncertainty_step(kiln_prob_step_of(v)), p.temporal);
}

#endif
