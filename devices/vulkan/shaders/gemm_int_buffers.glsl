// Signed 8- and 16-bit views of device memory for the integer GEMM
// shaders (buffers.glsl has unsigned ones).
#ifndef GEMM_INT_BUFFERS_GLSL
#define GEMM_INT_BUFFERS_GLSL
layout(buffer_reference, std430, buffer_reference_align = 1) buffer Int8s { int8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Int16s { int16_t v[]; };
#endif
