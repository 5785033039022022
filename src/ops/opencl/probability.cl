/* The probability family's OpenCL kernel around probability_px.h (one work item per pixel; z = image index). */

__kernel void probability_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                 __global uchar* out_base, __global const KilnImageDesc* out_descs,
                                 KilnProbabilityParams params) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc dout = out_descs[i];
  if (x >= dout.width || y >= dout.height) return;
  const float prev = params.smooth ? kiln_px_load(out_base, dout, x, y, 0) : 0.0f;
  kiln_px_store(out_base, dout, x, y, 0, kiln_prob_output(in_base, in_descs[i], x, y, params, prev));
}
