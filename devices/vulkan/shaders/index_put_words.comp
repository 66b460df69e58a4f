#version 450
// index_put for 4 and 8-byte elements only, without 8/16/64-bit shader types
// (index_elements.glsl), so it runs on every device; the shader is index_put.glsl.
#define INDEX_WORDS_ONLY
#include "index_put.glsl"
