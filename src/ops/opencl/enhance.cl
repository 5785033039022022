/* The enhance family on OpenCL, around enhance_px.h (prepended with kernel_defs.h and image_px.h at build time).
 * Every kernel takes a 3-D range (x, y, image) rounded up to the work-group size and checks its image's bounds.
 * All images are packed u8 HWC, except the f32 HWC rows of the unsharp blur. */
#pragma OPENCL FP_CONTRACT OFF

/* Per (row, image): the sum of the row's gray levels after the table (PIL contrast's mean). row_sums has
 * max_height entries per image. */
__kernel void enhance_row_gray_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                      __global const uchar* lut, KilnEnhanceArgs args, __global long* row_sums,
                                      int max_height) {
  const int gx = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc d = in_descs[i];
  if (gx != 0 || y >= d.height) return;
  const int use_lut = (args.flags & KILN_ENHANCE_LUT) != 0;
  long sum = 0;
  for (int x = 0; x < d.width; ++x) {
    int c0 = kiln_enhance_load(in_base, d, x, y, 0);
    int c1 = d.channels >= 3 ? kiln_enhance_load(in_base, d, x, y, 1) : 0;
    int c2 = d.channels >= 3 ? kiln_enhance_load(in_base, d, x, y, 2) : 0;
    if (use_lut) {
      c0 = lut[c0];
      c1 = lut[c1];
      c2 = lut[c2];
    }
    sum += kiln_enhance_gray(args, d.channels, c0, c1, c2);
  }
  row_sums[(long)i * max_height + y] = sum;
}

/* Per image: the rounded mean gray level from the row sums. */
__kernel void enhance_mean_kernel(__global const KilnImageDesc* in_descs, __global const long* row_sums,
                                  int max_height, __global int* means, int count) {
  const int i = (int)get_global_id(0);
  if (get_global_id(1) != 0 || i >= count) return;
  const KilnImageDesc d = in_descs[i];
  long total = 0;
  for (int y = 0; y < d.height; ++y) total += row_sums[(long)i * max_height + y];
  means[i] = kiln_enhance_mean_level(total, (long)d.width * d.height);
}

/* The table and PIL contrast. */
__kernel void enhance_point_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                   __global uchar* out_base, __global const KilnImageDesc* out_descs,
                                   __global const uchar* lut, KilnEnhanceArgs args, __global const int* means) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc d = in_descs[i];
  if (x >= d.width || y >= d.height) return;
  const KilnImageDesc o = out_descs[i];
  const int mean = (args.flags & KILN_ENHANCE_CONTRAST) != 0 ? means[i] : 0;
  for (int c = 0; c < d.channels; ++c) {
    const int value = kiln_enhance_load(in_base, d, x, y, c);
    out_base[o.offset + (long)y * o.row_stride + (long)x * o.channels + c] =
        kiln_enhance_point(args, lut, d.channels, c, value, mean);
  }
}

/* PIL sharpness. */
__kernel void enhance_sharpness_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                       __global uchar* out_base, __global const KilnImageDesc* out_descs,
                                       KilnEnhanceArgs args) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc d = in_descs[i];
  if (x >= d.width || y >= d.height) return;
  const KilnImageDesc o = out_descs[i];
  for (int c = 0; c < d.channels; ++c) {
    out_base[o.offset + (long)y * o.row_stride + (long)x * o.channels + c] =
        kiln_enhance_sharpness(args, in_base, d, x, y, c);
  }
}

/* The unsharp blur's horizontal pass into f32 rows. */
__kernel void enhance_blur_rows_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                       __global uchar* rows_base, __global const KilnImageDesc* rows_descs,
                                       __global const float* weights, KilnEnhanceArgs args) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc d = in_descs[i];
  if (x >= d.width || y >= d.height) return;
  const KilnImageDesc r = rows_descs[i];
  for (int c = 0; c < d.channels; ++c) {
    *(__global float*)(rows_base + r.offset + (long)y * r.row_stride + ((long)x * r.channels + c) * 4) =
        kiln_enhance_blur_row(in_base, d, weights, args.ksize, x, y, c);
  }
}

/* The vertical pass, rounded, and PIL's unsharp rule. */
__kernel void enhance_unsharp_kernel(__global const uchar* in_base, __global const KilnImageDesc* in_descs,
                                     __global const uchar* rows_base, __global const KilnImageDesc* rows_descs,
                                     __global uchar* out_base, __global const KilnImageDesc* out_descs,
                                     __global const float* weights, KilnEnhanceArgs args) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int i = (int)get_global_id(2);
  const KilnImageDesc d = in_descs[i];
  if (x >= d.width || y >= d.height) return;
  const KilnImageDesc r = rows_descs[i];
  const KilnImageDesc o = out_descs[i];
  for (int c = 0; c < d.channels; ++c) {
    const int blurred = kiln_enhance_blur_col(rows_base, r, weights, args.ksize, x, y, c);
    const int value = kiln_enhance_load(in_base, d, x, y, c);
    out_base[o.offset + (long)y * o.row_stride + (long)x * o.channels + c] =
        kiln_enhance_unsharp(value, blurred, args.percent, args.threshold);
  }
}
