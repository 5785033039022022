/* The HDF5 "Zstandard" filter (registered id 32015, cd_values[0] = compression level).
 *
 * Shared by the plugin module (h5z_zstd_plugin.c, for h5py/h5dump via HDF5_PLUGIN_PATH) and by kiln itself
 * (hdf5_zstd_register.cpp registers the same class in-process with H5Zregister). Plain C that also compiles as
 * C++. It calls no HDF5 function, only libzstd and malloc/free, so the plugin loads in processes where libhdf5's
 * symbols are not global (h5py). Buffers are exchanged with malloc/free, as HDF5's filter pipeline expects. */
#ifndef KILN_H5Z_ZSTD_FILTER_H
#define KILN_H5Z_ZSTD_FILTER_H

#include <hdf5.h>
#include <stdlib.h>
#include <zstd.h>

#define KILN_H5Z_ZSTD_ID 32015
#define KILN_H5Z_ZSTD_MAX_OUTPUT ((size_t)1 << 34) /* 16 GiB: refuse to inflate corrupt frames beyond this */

/* Streaming decompression for frames that do not record their content size (or several concatenated frames).
 * Grows the output buffer geometrically; returns the decoded size, or 0 on error. */
/* Doubles the output buffer (up to KILN_H5Z_ZSTD_MAX_OUTPUT); 0 on failure, the old buffer stays valid. */
static int kiln_h5z_zstd_grow(unsigned char** out, size_t* cap, ZSTD_outBuffer* ob) {
  size_t grown = *cap * 2;
  unsigned char* bigger;
  if (grown > KILN_H5Z_ZSTD_MAX_OUTPUT) return 0;
  bigger = (unsigned char*)realloc(*out, grown);
  if (bigger == NULL) return 0;
  *out = bigger;
  *cap = grown;
  ob->dst = bigger;
  ob->size = grown;
  return 1;
}

static size_t kiln_h5z_zstd_decompress_stream(const void* src, size_t src_size, void** out_buf, size_t* out_cap) {
  ZSTD_DStream* stream = ZSTD_createDStream();
  size_t cap = src_size * 4 > ZSTD_DStreamOutSize() ? src_size * 4 : ZSTD_DStreamOutSize();
  unsigned char* out = (unsigned char*)malloc(cap);
  ZSTD_inBuffer in;
  ZSTD_outBuffer ob;
  size_t last = 1;
  if (stream == NULL || out == NULL) goto fail;
  ZSTD_initDStream(stream);
  in.src = src;
  in.size = src_size;
  in.pos = 0;
  ob.dst = out;
  ob.size = cap;
  ob.pos = 0;
  while (in.pos < in.size) {
    if (ob.pos == ob.size && !kiln_h5z_zstd_grow(&out, &cap, &ob)) goto fail;
    last = ZSTD_decompressStream(stream, &ob, &in);
    if (ZSTD_isError(last)) goto fail;
  }
  /* Flush whatever the decoder still holds once all input is consumed. */
  while (last != 0) {
    size_t before = ob.pos;
    if (ob.pos == ob.size && !kiln_h5z_zstd_grow(&out, &cap, &ob)) goto fail;
    last = ZSTD_decompressStream(stream, &ob, &in);
    if (ZSTD_isError(last)) goto fail;
    if (last != 0 && ob.pos == before && ob.pos < ob.size) goto fail; /* truncated frame: no progress possible */
  }
  ZSTD_freeDStream(stream);
  if (ob.pos == 0) {
    free(out);
    return 0;
  }
  *out_buf = out;
  *out_cap = cap;
  return ob.pos;
fail:
  if (stream != NULL) ZSTD_freeDStream(stream);
  free(out);
  return 0;
}

/* H5Z_func_t: compresses on write, decompresses with H5Z_FLAG_REVERSE. Returns the new valid size, 0 on error. */
static size_t kiln_h5z_zstd_filter(unsigned int flags, size_t cd_nelmts, const unsigned int cd_values[],
                                   size_t nbytes, size_t* buf_size, void** buf) {
  if (flags & H5Z_FLAG_REVERSE) {
    const unsigned long long content = ZSTD_getFrameContentSize(*buf, nbytes);
    void* out = NULL;
    size_t out_cap = 0;
    size_t out_size = 0;
    if (content == ZSTD_CONTENTSIZE_ERROR) return 0;
    if (content != ZSTD_CONTENTSIZE_UNKNOWN && content > 0 && content <= KILN_H5Z_ZSTD_MAX_OUTPUT) {
      out = malloc((size_t)content);
      if (out == NULL) return 0;
      out_size = ZSTD_decompress(out, (size_t)content, *buf, nbytes);
      if (!ZSTD_isError(out_size) && out_size == (size_t)content) {
        out_cap = (size_t)content;
      } else {
        /* Several frames, or a header that lies: decode by streaming instead (never past the buffer). */
        free(out);
        out = NULL;
        out_size = 0;
      }
    }
    if (out == NULL) {
      out_size = kiln_h5z_zstd_decompress_stream(*buf, nbytes, &out, &out_cap);
      if (out_size == 0) return 0;
    }
    free(*buf);
    *buf = out;
    *buf_size = out_cap;
    return out_size;
  } else {
    const int level = cd_nelmts > 0 ? (int)cd_values[0] : ZSTD_CLEVEL_DEFAULT;
    const size_t bound = ZSTD_compressBound(nbytes);
    void* out = malloc(bound);
    size_t out_size;
    if (out == NULL) return 0;
    out_size = ZSTD_compress(out, bound, *buf, nbytes, level);
    if (ZSTD_isError(out_size)) {
      free(out);
      return 0;
    }
    free(*buf);
    *buf = out;
    *buf_size = bound;
    return out_size;
  }
}

/* The filter class, positionally initialised so the header also compiles as C++. */
static const H5Z_class2_t kiln_h5z_zstd_class = {
    H5Z_CLASS_T_VERS,                /* version */
    (H5Z_filter_t)KILN_H5Z_ZSTD_ID,  /* id */
    1,                               /* encoder_present */
    1,                               /* decoder_present */
    "Zstandard compression: http://www.zstd.net", /* name (as registered with The HDF Group) */
    NULL,                            /* can_apply */
    NULL,                            /* set_local */
    (H5Z_func_t)kiln_h5z_zstd_filter /* filter */
};

#endif /* KILN_H5Z_ZSTD_FILTER_H */
