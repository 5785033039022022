/* Series encodings (series_encoding_px.h) on OpenCL: one work item per pixel; z = window. The prepared rows are one
 * float32 image, row i for window i. */

__kernel void series_encoding_kernel(__global const uchar* rows_base, __global const KilnImageDesc* rows_desc,
                                     __global uchar* out_base, __global const KilnImageDesc* out_descs,
                                     KilnEncodingParams params) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int w = (int)get_global_id(2);
  const KilnImageDesc dout = out_descs[w];
  if (x >= dout.width || y >= dout.height) return;
  const KilnImageDesc drows = rows_desc[0];
  __global const float* row = (__global const float*)(rows_base + drows.offset + (long)w * drows.row_stride);
  const int i = kiln_encoding_index(y, dout.height, params.n);
  const int j = kiln_encoding_index(x, dout.width, params.n);
  const float level = kiln_encoding_level(row, i, j, params);
  kiln_px_store(out_base, dout, x, y, 0, params.as_float ? level / 255.0f : level);
}
