"""DLPack between tessera's CUDA device and PyTorch's and CuPy's CUDA
arrays: memory shared both ways, dtypes and strides kept, lifetimes held by
the capsule, and the stream handshake (work the producer queued is visible
to the consumer's stream without an explicit synchronize).

Skips without a tessera CUDA device (every machine CI runs on), and per
test without torch.cuda or CuPy. tools/gpu_check runs the bindings tests on
the GPU machine with a module built for its Python.
"""

import gc

import pytest

import tessera

pytestmark = pytest.mark.skipif(not any(d.type == "cuda" for d in tessera.devices()),
                                reason="no tessera cuda device")

try:
    import torch
except ImportError:
    torch = None

requires_torch_cuda = pytest.mark.skipif(torch is None or not torch.cuda.is_available(),
                                         reason="no torch with CUDA")

DTYPE_NAMES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "uint8", "bool"]


@requires_torch_cuda
def test_torch_to_tessera_shares_memory_and_strides():
    x = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)[:, 1:]
    t = tessera.from_dlpack(x)
    assert str(t.device) == "cuda:0"
    assert t.shape == (3, 3) and t.strides == (4, 1)
    assert t.data_ptr() == x.data_ptr()
    assert t.cpu().tolist() == x.cpu().tolist()
    t.fill_(7)
    tessera.synchronize(t.device)
    assert x.cpu().tolist() == [[7.0] * 3] * 3


@requires_torch_cuda
def test_tessera_to_torch_shares_memory():
    t = tessera.arange(6, dtype=tessera.float32, device="cuda:0")
    y = torch.from_dlpack(t)
    assert y.device.type == "cuda" and y.device.index == 0
    assert y.data_ptr() == t.data_ptr()
    y.add_(1)
    torch.cuda.synchronize()
    assert t.cpu().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


@requires_torch_cuda
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtypes_round_trip(name):
    torch_dtype, tessera_dtype = getattr(torch, name), getattr(tessera, name)
    x = (torch.arange(10, device="cuda") % 3).to(torch_dtype)
    t = tessera.from_dlpack(x)
    assert t.dtype == tessera_dtype
    back = torch.from_dlpack(t)
    assert back.dtype == torch_dtype
    assert back.data_ptr() == x.data_ptr()
    assert torch.equal(back, x)


@requires_torch_cuda
def test_transposed_views_keep_their_strides():
    x = torch.randn(5, 7, device="cuda").t()
    t = tessera.from_dlpack(x)
    assert t.strides == x.stride()
    y = torch.from_dlpack(t)
    assert y.stride() == x.stride()
    assert torch.equal(y, x)
    # A tessera op on the view reads the strides right.
    assert torch.equal(torch.from_dlpack(t.contiguous()), x.contiguous())


@requires_torch_cuda
def test_imported_memory_outlives_the_producer():
    before = torch.cuda.memory_allocated()
    x = torch.full((1 << 20,), 3.0, device="cuda")
    t = tessera.from_dlpack(x)
    del x
    gc.collect()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() > before  # t holds torch's block
    assert t.sum().item() == 3.0 * (1 << 20)
    del t  # the capsule's deleter gives the block back to torch
    gc.collect()
    assert torch.cuda.memory_allocated() == before
    u = tessera.full((1000,), 2.0, device="cuda:0")
    y = torch.from_dlpack(u)
    del u
    gc.collect()
    assert y.sum().item() == 2000.0


@requires_torch_cuda
def test_stream_handshake_orders_producer_work_before_the_consumer():
    # Work on a side stream of torch, kept busy first so that a consumer
    # that ignored the stream argument would read the old values.
    side = torch.cuda.Stream()
    x = torch.zeros(1 << 20, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        x.fill_(5.0)
        t = tessera.from_dlpack(x)  # x.__dlpack__(stream=tessera's stream)
        total = t.sum().item()
    assert total == 5.0 * (1 << 20)


@requires_torch_cuda
def test_tessera_work_is_done_before_torch_reads():
    # Many milliseconds of work queued on tessera's stream: a __dlpack__
    # that did not wait for it would let torch read partial sums.
    t = tessera.zeros(1 << 22, device="cuda:0")
    for _ in range(1000):
        t.add_(1.0)
    y = torch.from_dlpack(t)
    assert y.min().item() == 1000.0 and y.max().item() == 1000.0


@requires_torch_cuda
def test_views_export_at_their_first_element():
    # torch 2.11 reads a DLPack tensor's data pointer and ignores its
    # byte_offset: a view must be exported at its own first element.
    t = tessera.arange(10, dtype=tessera.float32, device="cuda:0")[3:]
    y = torch.from_dlpack(t)
    assert y.data_ptr() == t.data_ptr()
    assert y.tolist() == [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]


def test_the_cuda_stream_argument_is_checked():
    t = tessera.ones(2, device="cuda:0")
    with pytest.raises(ValueError, match="ambiguous"):
        t.__dlpack__(stream=0)
    with pytest.raises(TypeError, match="stream"):
        t.__dlpack__(stream="1")
    assert tessera.from_dlpack(t.__dlpack__(stream=-1)).cpu().tolist() == [1.0, 1.0]


@pytest.fixture
def cupy():
    module = pytest.importorskip("cupy")
    try:
        module.zeros(1).sum().item()
    except Exception as e:  # a CuPy built for another CUDA, no NVRTC...
        pytest.skip(f"CuPy cannot run here: {type(e).__name__}: {e}")
    return module


def test_cupy_both_ways(cupy):
    a = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)[:, 1:]
    t = tessera.from_dlpack(a)
    assert t.shape == (3, 3) and t.strides == (4, 1)
    assert t.data_ptr() == a.data.ptr
    t.fill_(2)
    tessera.synchronize(t.device)
    assert bool((a == 2).all())
    u = tessera.arange(5, dtype=tessera.int64, device="cuda:0")
    b = cupy.from_dlpack(u)
    assert b.data.ptr == u.data_ptr()
    assert b.tolist() == [0, 1, 2, 3, 4]


def test_cupy_stream_handshake(cupy):
    with cupy.cuda.Stream(non_blocking=True):
        a = cupy.zeros(1 << 22, dtype=cupy.float32)
        for _ in range(1000):  # milliseconds queued on CuPy's stream
            a += 1
        t = tessera.from_dlpack(a)  # passes tessera's stream to a.__dlpack__
        low, high = t.min().item(), t.max().item()
    assert low == 1000.0 and high == 1000.0


def test_exporting_a_vulkan_tensor_is_refused():
    if not any(d.type == "vulkan" for d in tessera.devices()):
        pytest.skip("no vulkan device")
    with pytest.raises(TypeError, match="DLPack"):
        tessera.ones(2, device="vulkan:0").__dlpack__()
