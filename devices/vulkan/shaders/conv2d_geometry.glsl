// The push constants of im2col.glsl and col2im.glsl (ConvParams in
// kernels/conv2d.cc): a chunk of `batch` images of the NCHW input (any
// strides, the address already at the chunk's first image) and the column
// matrix [channels * kernel_h * kernel_w][batch][out_h * out_w], contiguous.

layout(local_size_x_id = 0) in;

layout(push_constant, std430) uniform Params {
  uvec2 image_addr;    // input (im2col reads it) or grad_input (col2im writes it)
  uvec2 columns_addr;
  uint numel;          // of what one invocation produces: columns, or image elements
  uint batch, channels, height, width;
  uint kernel_h, kernel_w, out_h, out_w;
  int stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int image_strides[4];  // n, c, h, w in elements
} p;
