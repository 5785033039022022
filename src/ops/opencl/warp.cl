/* The warp family's OpenCL kernel: one work-item per output pixel (all channels), get_global_id(2) = image.
 * matrices: 6 floats per image, destination -> source. Math in warp_px.h (embedded before this file). */

__kernel void warp_affine_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                 __global uchar* out_base, __global const KilnImageDesc* out_descs,
                                 __global const float* matrices, int mode, float b0, float b1, float b2, float b3) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int image = (int)get_global_id(2);
  const KilnImageDesc out = out_descs[image];
  if (x >= out.width || y >= out.height) return;
  kiln_warp_pixel(in_base, in_descs[image], out_base, out, matrices + 6 * image, mode, b0, b1, b2, b3, x, y);
}
