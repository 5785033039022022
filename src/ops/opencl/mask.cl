/* The mask family's OpenCL kernels around mask_px.h (one work item per output pixel; z = image index). */

__kernel void mask_decide_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                 __global uchar* out_base, __global const KilnImageDesc* out_descs,
                                 KilnMaskParams params) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc din = in_descs[i];
  if (x >= din.width || y >= din.height) return;
  const KilnImageDesc dout = out_descs[i];
  out_base[dout.offset + (long)y * dout.row_stride + x] = kiln_mask_decide(in_base, din, x, y, params);
}

/* pass: 0 median, 1 erode, 2 dilate (src and dst share shapes). */
__kernel void mask_smooth_kernel(__global const uchar* src_base, __global const KilnImageDesc* src_descs,
                                 __global uchar* dst_base, __global const KilnImageDesc* dst_descs, int pass,
                                 int radius) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc ds = src_descs[i];
  if (x >= ds.width || y >= ds.height) return;
  const KilnImageDesc dd = dst_descs[i];
  const uchar v = pass == 0 ? kiln_mask_median(src_base, ds, x, y, radius)
                            : kiln_mask_morph(src_base, ds, x, y, radius, pass == 2 ? 1 : 0);
  dst_base[dd.offset + (long)y * dd.row_stride + x] = v;
}
