/* The matte family's OpenCL kernel around matte_px.h (one work item per output pixel; z = image index). */

__kernel void matte_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                           __global uchar* out_base, __global const KilnImageDesc* out_descs, KilnMatteParams params) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc dout = out_descs[i];
  if (x >= dout.width || y >= dout.height) return;
  out_base[dout.offset + (long)y * dout.row_stride + x] =
      kiln_matte_at(in_base, in_descs[i], dout.width, dout.height, x, y, params);
}
