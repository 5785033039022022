/* The matte family's OpenCL kernel around matte_px.h: one work item per output pixel (a composite's three channels;
 * z = image), each 16 x 8 work-group adding its person pixels to its image's count when count_on. The frame and
 * background arguments are read by composites only. */

__kernel void matte_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                           __global uchar* out_base, __global const KilnImageDesc* out_descs, KilnMatteParams params,
                           __global const uchar* frame_base, __global const KilnImageDesc* frame_descs,
                           __global const uchar* back_base, __global const KilnImageDesc* back_descs,
                           __global int* counts, int count_on) {
  __local int group_person;
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const int first = get_local_id(0) == 0 && get_local_id(1) == 0;
  if (first) group_person = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const KilnImageDesc dout = out_descs[i];
  if (x < dout.width && y < dout.height) {
    const uchar v = kiln_matte_at(in_base, in_descs[i], dout.width, dout.height, x, y, params);
    if (params.composite) {
      kiln_matte_composite_px(frame_base, frame_descs[i], back_base, back_descs[i], out_base, dout, x, y, v);
    } else {
      out_base[dout.offset + (long)y * dout.row_stride + x] = v;
    }
    if (count_on && kiln_matte_person(v, params)) atomic_inc(&group_person);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (count_on && first && group_person > 0) atomic_add(&counts[i], group_person);
}
