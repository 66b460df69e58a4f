// f32 convolution as GEMMs over unfolded patches (im2col), for the problems
// where oneDNN offers only its reference implementation ("ref:any", a
// scalar loop per output element): with Debian's oneDNN 2.6 on an AVX-512
// CPU, the weight gradient of ViT's 16x16 stride-16 patch embedding took
// 3.9 s (torch CPU: 5.6 ms) and its input gradient 44 s, ConvNeXt's
// depthwise 7x7 weight gradient 180 ms (7.6 ms), and the forward of
// wav2vec2's positional convolution (kernel 128, 16 groups) most of its
// step. PyTorch's own
// CPU convolution falls back to the same unfold-and-GEMM scheme
// (slow_conv2d) where it does not use oneDNN.
//
// Every operand is a contiguous NCHW (input, output) or OIHW (weight)
// float buffer described by the geometry. The patches are unfolded a
// block of output rows at a time (a few MB at most, whatever the image
// size), and every sum runs in an order fixed by the problem alone, not by
// the thread count: the same bits on every run.
#pragma once

#include "devices/cpu/kernels/conv_common.h"

namespace tessera::cpu::nn {

// y = conv(x, w) + b (b may be null).
void gemm_conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                         float* y);

// gx = the gradient of conv(x, w) with respect to x, given gy.
void gemm_conv2d_backward_data(const ConvGeometry& g, const float* w, const float* gy, float* gx);

// gw (and gb, the bias gradient, where not null) given x and gy.
void gemm_conv2d_backward_weights(const ConvGeometry& g, const float* x, const float* gy,
                                  float* gw, float* gb);

}  // namespace tessera::cpu::nn
