/* Quality: integer sums of one block of KILN_QUALITY_BLOCK_ROWS rows of one image per work-group
 * (KILN_QUALITY_GROUP items, dimension 0; block = group id 1; image = global id 2). Each item accumulates a strided
 * subset of the block's pixels, then the group adds the items' sums in local memory. The sums are exact integers,
 * so the order of the additions does not matter: the host adds the blocks and gets the CPU's totals bit for bit.
 * partial[(image * blocks + block) * KILN_QUALITY_SUMS + k]: gray_sum, gray_sq, lap_sum, lap_sq, mag_fixed. */
#include "ops/quality_px.h"

__kernel __attribute__((reqd_work_group_size(KILN_QUALITY_GROUP, 1, 1)))
void quality_sums_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs, int bgr, int blocks,
                         __global long* partial) {
  const int image = (int)get_global_id(2);
  const int block = (int)get_group_id(1);
  const int lid = (int)get_local_id(0);
  const KilnImageDesc d = in_descs[image];
  const int y0 = block * KILN_QUALITY_BLOCK_ROWS;
  const int y1 = kiln_mini(d.height, y0 + KILN_QUALITY_BLOCK_ROWS);
  const int pixels = y1 > y0 ? (y1 - y0) * d.width : 0;

  long gray_sum = 0, gray_sq = 0, lap_sum = 0, lap_sq = 0, mag_fixed = 0;
  for (int p = lid; p < pixels; p += KILN_QUALITY_GROUP) {
    const int y = y0 + p / d.width;
    const int x = p - (p / d.width) * d.width;
    const KilnQualityWindow w = kiln_quality_window_at(in_base, d, x, y, bgr);
    kiln_quality_accumulate(w, &gray_sum, &gray_sq, &lap_sum, &lap_sq, &mag_fixed);
  }

  __local long scratch[KILN_QUALITY_SUMS][KILN_QUALITY_GROUP];
  scratch[0][lid] = gray_sum;
  scratch[1][lid] = gray_sq;
  scratch[2][lid] = lap_sum;
  scratch[3][lid] = lap_sq;
  scratch[4][lid] = mag_fixed;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = KILN_QUALITY_GROUP / 2; stride > 0; stride /= 2) {
    if (lid < stride) {
      for (int k = 0; k < KILN_QUALITY_SUMS; ++k) scratch[k][lid] += scratch[k][lid + stride];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid < KILN_QUALITY_SUMS) partial[((long)image * blocks + block) * KILN_QUALITY_SUMS + lid] = scratch[lid][0];
}
