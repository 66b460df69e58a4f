#version 450
// reduce_f32acc.comp with subgroupAdd for the sums of mode 2, for devices
// with subgroup arithmetic (kernels/reduce.cc checks).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#define ACC_T float
#define ACC_FLOAT
#define USE_SUBGROUPS
#include "reduce_common.glsl"
