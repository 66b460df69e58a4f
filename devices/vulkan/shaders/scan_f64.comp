#version 450
// Inclusive scans of f64, summed or multiplied in double (see scan.glsl);
// needs shaderFloat64 (kernels/scan.cc checks).
#define SCAN_F64
#include "scan.glsl"
