/* The normalize family's OpenCL kernel: one work-item per pixel (all channels), get_global_id(2) = image.
 * Math in normalize_px.h (embedded before this file). */

__kernel void normalize_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                               __global uchar* out_base, __global const KilnImageDesc* out_descs,
                               __global const float* mean, __global const float* std_dev) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int image = (int)get_global_id(2);
  const KilnImageDesc out = out_descs[image];
  if (x >= out.width || y >= out.height) return;
  kiln_normalize_pixel(in_base, in_descs[image], out_base, out, mean, std_dev, x, y);
}
