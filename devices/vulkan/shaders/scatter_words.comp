#version 450
// scatter for 4 and 8-byte elements only, without 8/16/64-bit shader types
// (index_elements.glsl), so it runs on every device; the shader is scatter.glsl.
#define INDEX_WORDS_ONLY
#include "scatter.glsl"
