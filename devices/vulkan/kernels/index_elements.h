// Helpers shared by the indexing kernels (gather, scatter, index_put,
// masked_fill, triangle, embedding, nll_loss): element kinds for
// shaders/index_elements.glsl, the 32-bit reach check for tensors a shader
// indexes by value, and the device-side index bounds (index_bounds.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"

namespace tessera::vulkan {

// The element kinds of shaders/index_elements.glsl (add_element, and
// fold_element for the other scatter reductions).
enum class AddKind : uint32_t {
  kF32, kF16, kBF16, kWrap8, kWrap16, kWrap32, kWrap64, kBool, kF64
};

// The shader's add kind for dtype; false for a dtype without one.
bool add_kind_of(DType dtype, AddKind* kind);

// Which module of an indexing shader family moves elements of itemsize
// bytes on this device: "<family>_words" for 4 and 8 bytes (every device),
// "<family>" for 1 and 2 (8/16-bit shader types); nullopt where the device
// lacks them.
std::optional<std::string> moving_shader(const KernelContext& ctx, std::string_view family,
                                         size_t itemsize);

// Which module of an indexing shader family adds or folds `kind` on this
// device: "<family>_words" for the kinds words_only_adds names (every
// device), "<family>" for the other kinds but f64 (8/16/64-bit shader
// types), "<family>_f64" for f64 (shaderFloat64); nullopt where the device
// lacks what it needs.
std::optional<std::string> adding_shader(const KernelContext& ctx, std::string_view family,
                                         AddKind kind);

// Whether the *_words.comp shaders (INDEX_WORDS_ONLY in
// index_elements.glsl: no 8/16/64-bit shader types, so every device) move
// elements of itemsize bytes, and add kind (when adding or folding).
inline bool words_only_moves(size_t itemsize) { return itemsize == 4 || itemsize == 8; }
inline bool words_only_adds(AddKind kind) {
  return kind == AddKind::kF32 || kind == AddKind::kWrap32 || kind == AddKind::kWrap64;
}

// FloatKind of shaders/index_elements.glsl (load_float, store_float).
enum class FloatKind : uint32_t { kF32, kF16, kBF16 };

// The shader's float kind for dtype; false for f64 and non-floating dtypes.
bool float_kind_of(DType dtype, FloatKind* kind);

// The module of a floating shader family that sums dtype on this device:
// "<family>" with dtype's FloatKind for f32, f16 and bf16, summing in f32
// (8/16/64-bit shader types), or "<family>_f64" summing in double
// (shaderFloat64); nullopt to stage (another dtype, or the device lacks it).
struct FloatShader {
  std::string name;
  FloatKind kind = FloatKind::kF32;  // the load_float/store_float kind
  DType compute_dtype = DType::kF32;   // of the sums
};
std::optional<FloatShader> float_shader(const KernelContext& ctx, std::string_view family,
                                        DType dtype);

// The first index outside [0, size) in row-major order of index (read
// back to the host), skipping *ignore when given: the value the CPU
// kernels name in their IndexError; only called once the bounds say there
// is one.
int64_t first_bad_index(const Tensor& index, int64_t size, const int64_t* ignore);

// True when every element offset of t (from its sizes and strides) and its
// largest dim size fit a 32-bit int, so a shader can address any element
// of t, including ones picked by an index value.
bool reach_fits_int32(const Tensor& t);

// {min, max} of the integer tensor index (any integer dtype and strides,
// at least one element), skipping elements equal to *ignore when given,
// computed by shaders/index_bounds.comp into out (int64 [2], on the
// device; {INT64_MAX, INT64_MIN} when every element was skipped). False,
// with nothing launched, when the shader cannot address index.
bool launch_index_bounds(const KernelContext& ctx, Tensor& out, const Tensor& index,
                         const int64_t* ignore);

// launch_index_bounds into a temporary and read back (waits for the
// device); nullopt when the shader cannot address index.
std::optional<std::pair<int64_t, int64_t>> read_index_bounds(const KernelContext& ctx,
                                                             const Tensor& index,
                                                             const int64_t* ignore);

}  // namespace tessera::vulkan
