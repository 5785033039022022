/* Resize kernels: one work-item per output pixel (x, y, image); the math is kiln_resize_pixel (resize_px.h). */

__kernel void resize_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                            __global uchar* out_base, __global const KilnImageDesc* out_descs,
                            __global const KilnResizeImage* plans, __global const int* index,
                            __global const float* weight, KilnResizePad pad) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int n = (int)get_global_id(2);
  const KilnImageDesc od = out_descs[n];
  if (x >= od.width || y >= od.height) return;
  kiln_resize_pixel(in_base, in_descs[n], out_base, od, plans[n], index, weight, pad, x, y);
}
