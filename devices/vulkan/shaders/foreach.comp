#version 450
// A list of f16 or bf16 entries of one pointwise op in one dispatch, for
// devices with 8/16/64-bit shader types; see foreach.glsl.
#define FOREACH_TYPED
#include "element_kinds.glsl"
#include "foreach.glsl"
