/* The color family's OpenCL kernel: one work-item per output pixel, get_global_id(2) = image of the batch.
 * Math in color_px.h (embedded before this file). */

__kernel void color_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                           __global uchar* out_base, __global const KilnImageDesc* out_descs, int conversion,
                           KilnYuvConsts yuv) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int image = (int)get_global_id(2);
  const KilnImageDesc out = out_descs[image];
  if (x >= out.width || y >= out.height) return;
  kiln_color_pixel(in_base, in_descs[image], out_base, out, conversion, yuv, x, y);
}
