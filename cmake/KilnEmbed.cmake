# Placeholder until the OpenCL backend lands: defines kiln_embed_opencl(target).
function(kiln_embed_opencl target)
endfunction()
