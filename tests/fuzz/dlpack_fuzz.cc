// Fuzz target: the checks of an imported DLPack tensor (the module's
// from_dlpack) on hostile capsules: any ndim, dtype, shape, strides, byte
// offset and data pointer. Each must be refused with a TypeError or
// ValueError, or give a layout whose extent is exactly the bytes from the
// first to one past the last element; when that lies inside the fuzzer's
// buffer, a tensor over it is copied element by element (ASan watches
// every load).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bindings/csrc/dlpack_layout.h"
#include "runtime/tessera.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using tessera::fuzz::FuzzInput;
namespace dlpack = tessera_py::dlpack;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "dlpack_fuzz: %s\n", what);
  std::abort();
}

constexpr size_t kBufferBytes = size_t{1} << 20;

// Mostly small values (what real producers send), sometimes anything.
int64_t dim_value(FuzzInput& in) {
  const uint8_t kind = in.byte();
  if (kind < 200) return kind % 7;
  if (kind < 230) return in.in_range(-4, 4096);
  return in.raw<int64_t>();
}

// The extent in exact arithmetic: bytes from the first element to one past
// the last, or -1 when it exceeds what size_t holds.
__int128 exact_extent(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                      size_t itemsize) {
  __int128 last = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    last += static_cast<__int128>(sizes[d] - 1) * strides[d];
  }
  return (last + 1) * static_cast<__int128>(itemsize);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::vector<char>* buffer = new std::vector<char>(kBufferBytes + 64);
  FuzzInput in(data, size);
  dlpack::Tensor dl{};
  const uint8_t ndim_kind = in.byte();
  dl.ndim = ndim_kind < 240 ? ndim_kind % 6 : in.raw<int32_t>();
  dl.dtype = {in.byte(), in.byte(), static_cast<uint16_t>(in.boolean() ? 1 : in.raw<uint16_t>())};
  // The arrays the capsule points at: sized by a sane ndim only.
  const size_t n = dl.ndim >= 0 && dl.ndim <= 80 ? static_cast<size_t>(dl.ndim) : 0;
  std::vector<int64_t> shape(n), strides(n);
  for (auto& s : shape) s = dim_value(in);
  const bool has_strides = in.boolean();
  for (auto& s : strides) s = dim_value(in);
  // A null array where ndim claims elements is one of the defects to catch.
  dl.shape = in.byte() < 250 ? shape.data() : nullptr;
  dl.strides = has_strides ? strides.data() : nullptr;
  const uint8_t data_kind = in.byte();
  char* base = buffer->data() + (64 - reinterpret_cast<uintptr_t>(buffer->data()) % 64) % 64;
  dl.data = data_kind < 240 ? base : data_kind < 250 ? nullptr : base + 1;
  dl.byte_offset = in.byte() < 230 ? in.in_range(0, 64) : in.raw<uint64_t>();

  tessera_py::DLPackLayout layout;
  try {
    layout = tessera_py::checked_dlpack_layout(dl, "from_dlpack");
  } catch (const tessera::TypeError&) {
    return 0;
  } catch (const tessera::ValueError&) {
    return 0;
  }
  // Accepted: the layout must be what the capsule says, exactly.
  if (dl.ndim < 0 || dl.ndim > tessera_py::kMaxDLPackDims) fail("accepted a bad ndim");
  if (layout.sizes.size() != n) fail("layout has the wrong rank");
  const std::vector<int64_t> used_strides(layout.strides.begin(), layout.strides.end());
  for (size_t d = 0; d < n; ++d) {
    if (layout.sizes[d] != shape[d]) fail("layout sizes differ from the shape");
    if (has_strides && used_strides[d] != strides[d]) fail("layout strides differ");
    if (used_strides[d] < 0 || shape[d] < 0) fail("accepted a negative size or stride");
  }
  const size_t itemsize = tessera::itemsize(layout.dtype);
  const __int128 extent = exact_extent(shape, used_strides, itemsize);
  if (extent != static_cast<__int128>(layout.nbytes)) fail("extent is not exact");
  if (layout.nbytes > 0 && reinterpret_cast<uintptr_t>(layout.data) % itemsize != 0) {
    fail("accepted misaligned data");
  }
  // Read every element when the tensor lies in the buffer.
  const char* first = layout.data;
  if (layout.nbytes == 0 || first < base || first + layout.nbytes > base + kBufferBytes) return 0;
  auto storage = std::make_shared<tessera::Storage>(tessera::host_device(), layout.data,
                                                    layout.nbytes, nullptr);
  const tessera::Tensor t =
      tessera::Tensor::from_storage(storage, layout.dtype, layout.sizes, layout.strides);
  // Broadcast views (zero strides) may describe far more elements than
  // bytes: copy only what fits the fuzzer's memory.
  if (t.numel() > static_cast<int64_t>(kBufferBytes)) return 0;
  const tessera::Tensor copy = t.contiguous();
  if (copy.numel() != t.numel()) fail("copy lost elements");
  return 0;
}
