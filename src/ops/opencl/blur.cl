/* The blur family on OpenCL, around blur_px.h (prepended with kernel_defs.h and image_px.h at build time): one
 * kernel per stage, each over (x, y, image) of the image it writes, rounded up to the work-group size. */

__kernel void blur_shrink_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                 __global uchar* small_base, __global const KilnImageDesc* small_descs, int factor) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc s = small_descs[i];
  if (x >= s.width || y >= s.height) return;
  const KilnImageDesc d = in_descs[i];
  for (int c = 0; c < s.channels; ++c) {
    small_base[kiln_px_offset(s, x, y, c)] = kiln_blur_shrink_px(in_base, d, factor, x, y, c);
  }
}

__kernel void blur_box_kernel(__global const uchar* src_base, __global const KilnImageDesc* src_descs,
                              __global uchar* dst_base, __global const KilnImageDesc* dst_descs, KilnBlurArgs args,
                              int horizontal) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc d = dst_descs[i];
  if (x >= d.width || y >= d.height) return;
  const KilnImageDesc s = src_descs[i];
  for (int c = 0; c < d.channels; ++c) {
    dst_base[kiln_px_offset(d, x, y, c)] = kiln_blur_box_px(src_base, s, args, horizontal, x, y, c);
  }
}

__kernel void blur_enlarge_kernel(__global const uchar* small_base, __global const KilnImageDesc* small_descs,
                                  __global uchar* out_base, __global const KilnImageDesc* out_descs) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc o = out_descs[i];
  if (x >= o.width || y >= o.height) return;
  const KilnImageDesc s = small_descs[i];
  for (int c = 0; c < o.channels; ++c) {
    out_base[kiln_px_offset(o, x, y, c)] = kiln_blur_enlarge_px(small_base, s, o.width, o.height, x, y, c);
  }
}
