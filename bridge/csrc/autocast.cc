// torch.autocast("tessera"): the AutocastPrivateUse1 kernels.
//
// PyTorch keeps the autocast state for PrivateUse1 (enabled flag, dtype,
// cast cache) and gives tessera tensors the AutocastPrivateUse1 key, but
// registers no kernels for that key: not even the fallthrough every other
// autocast backend gets, so without this file every op under
// torch.autocast("tessera") fails. The op lists are torch's own shared
// lists (ATen/autocast_mode.h), the ones CUDA's autocast uses, so an op
// behaves under autocast on tessera as it does on CUDA:
//  - lower_precision_fp: matmuls, convolutions, linear... run in the
//    autocast dtype (float16 or bfloat16);
//  - fp32: ops that lose too much in 16 bits (exp, log, pow, norms, losses,
//    softmax through fp32_set_opt_dtype...) run in float32;
//  - promote: ops of several inputs run in their widest input type.
#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

namespace torch_tessera {
namespace {

// The op lists spell argument types unqualified, as inside namespace at.
#if __has_include(<ATen/core/Dimname.h>)
using at::DimnameList;  // torch 2.11's list has sum(DimnameList); 2.13 has no named tensors
#endif
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

// As on CUDA: binary_cross_entropy takes probabilities whose float16
// rounding (1 - 1e-4 becomes 1) makes its log blow up, so autocast
// refuses it instead of silently running it in float32.
Tensor binary_cross_entropy_banned(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                                   int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
              "autocast on tessera (as on CUDA): their inputs are probabilities that lose "
              "precision in 16 bits. Use binary_cross_entropy_with_logits / BCEWithLogitsLoss, "
              "which are safe, or run the loss outside the autocast region in float32.");
}

// Ops without an autocast kernel run as they would outside autocast.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define TESSERA_AUTOCAST_LOWER_PRECISION(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define TESSERA_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define TESSERA_AUTOCAST_FP32_SET_OPT_DTYPE(...) \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define TESSERA_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(TESSERA_AUTOCAST_LOWER_PRECISION)
  AT_FORALL_FP32(TESSERA_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(TESSERA_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(TESSERA_AUTOCAST_PROMOTE)
#undef TESSERA_AUTOCAST_LOWER_PRECISION
#undef TESSERA_AUTOCAST_FP32
#undef TESSERA_AUTOCAST_FP32_SET_OPT_DTYPE
#undef TESSERA_AUTOCAST_PROMOTE
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"),
         TORCH_FN((&binary_cross_entropy_banned)));
}

}  // namespace
}  // namespace torch_tessera
