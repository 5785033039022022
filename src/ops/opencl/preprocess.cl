/* Preprocess kernels: one work-item per output pixel (x, y, image); the math is kiln_preprocess_pixel
 * (preprocess_px.h). Built after the resize program's source (see opencl_preprocess.cpp). */

__kernel void preprocess_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                __global uchar* out_base, __global const KilnImageDesc* out_descs,
                                __global const KilnResizeImage* plans, __global const int* index,
                                __global const float* weight, KilnPreprocessConsts consts) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int n = (int)get_global_id(2);
  const KilnImageDesc od = out_descs[n];
  if (x >= od.width || y >= od.height) return;
  kiln_preprocess_pixel(in_base, in_descs[n], out_base, od, plans[n], index, weight, consts, x, y);
}
