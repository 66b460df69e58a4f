#version 450
// Inclusive scans of f32, f16, bf16, i32 and i64 (see scan.glsl).
#include "scan.glsl"
