#version 450
// A list of f32 entries of one pointwise op in one dispatch, with no
// optional shader features; see foreach.glsl.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "foreach.glsl"
