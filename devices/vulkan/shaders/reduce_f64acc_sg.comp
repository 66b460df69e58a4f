#version 450
// reduce_f64acc.comp with mode 3 (a subgroup per output, shuffles), for
// devices with subgroup arithmetic and shuffles (kernels/reduce.cc checks).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define ACC_T double
#define ACC_DOUBLE
#define USE_SUBGROUPS
#include "reduce_common.glsl"
