// How float32 matrix products (bmm, mm, matmul, linear, and the GEMMs in
// convolution) may trade precision for speed, as in PyTorch's
// torch.set_float32_matmul_precision:
//   kHighest  float32 throughout (the default);
//   kHigh     devices with TF32 tensor cores may use them: inputs rounded
//             to a 10-bit mantissa, products accumulated in float32;
//   kMedium   devices may go further (bfloat16 inputs); none does yet, so
//             it behaves as kHigh.
// A device without such units ignores the setting. The environment
// variable TESSERA_FLOAT32_MATMUL_PRECISION (highest, high, medium) sets
// the starting value.
#pragma once

#include <string_view>

namespace tessera {

enum class MatmulPrecision { kHighest, kHigh, kMedium };

void set_float32_matmul_precision(MatmulPrecision precision);
MatmulPrecision float32_matmul_precision();

// "highest", "high" or "medium"; ValueError for anything else.
MatmulPrecision parse_matmul_precision(std::string_view name);
std::string_view matmul_precision_name(MatmulPrecision precision);

}  // namespace tessera
