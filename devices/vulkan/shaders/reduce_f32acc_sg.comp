#version 450
// reduce_f32acc.comp with subgroup ops: subgroupAdd for the sums of mode
// 2, and mode 3 (a subgroup per output), for devices with subgroup
// arithmetic and shuffles (kernels/reduce.cc checks).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define ACC_T float
#define ACC_FLOAT
#define USE_SUBGROUPS
#include "reduce_common.glsl"
