// Typed views of device memory through buffer device addresses: a tensor's
// data pointer is a 64-bit address (passed as a uvec2 in push constants),
// so shaders need no descriptor sets and are not bound by
// maxStorageBufferRange (128 MiB on lavapipe).
#ifndef TESSERA_BUFFERS_GLSL
#define TESSERA_BUFFERS_GLSL
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

layout(buffer_reference, std430, buffer_reference_align = 1) buffer Bytes { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer SignedBytes { int8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Shorts { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Int16s { int16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Halfs { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Ints { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Int64s { int64_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer DoubleWords { uvec2 v[]; };
#endif  // TESSERA_BUFFERS_GLSL
