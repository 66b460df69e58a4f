#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/NAME/).

The seeds are committed; this script says where they came from and
rewrites them: python3 tests/fuzz/make_seeds.py. Each seed is a small
valid input (and a few near-misses), so the fuzzer starts from the
format's structure instead of discovering it byte by byte.
"""
import json
import pathlib
import random
import struct

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"


def write(target, name, data):
    path = ROOT / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# -- safetensors files.

ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2,
            "I8": 1, "U8": 1, "BOOL": 1}


def safetensors(tensors, metadata=None, pad=True):
    """tensors: [(name, dtype, shape)]; data bytes are a counting pattern."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape in tensors:
        n = ITEMSIZE[dtype]
        for s in shape:
            n *= s
        chunk = bytes((len(data) + i) % 251 for i in range(n))
        if dtype == "BOOL":
            chunk = bytes(b % 2 for b in chunk)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + n]}
        data += chunk
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    t = "safetensors_fuzz"
    write(t, "empty_header", safetensors([]))
    write(t, "one_f32", safetensors([("w", "F32", [2, 3])]))
    write(t, "every_dtype", safetensors(
        [(d.lower(), d, [3]) for d in ITEMSIZE], metadata={"format": "pt"}))
    write(t, "scalar_and_empty", safetensors([("s", "F64", []), ("e", "F32", [0, 4])]))
    write(t, "unpadded", safetensors([("a", "I64", [2, 2]), ("b", "U8", [5])], pad=False))
    write(t, "nested_names", safetensors(
        [("encoder.layer.0.weight", "BF16", [4, 2]), ("encoder.layer.0.bias", "F16", [4])],
        metadata={"note": "unicode \u00e9"}))
    # Near-misses: each must be refused.
    good = safetensors([("w", "F32", [2])])
    write(t, "bad_length", struct.pack("<Q", 1 << 40) + good[8:])
    write(t, "bad_json", struct.pack("<Q", 8) + b'{"w":{"d')
    overlap = {"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
               "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}
    text = json.dumps(overlap).encode()
    write(t, "overlap", struct.pack("<Q", len(text)) + text + bytes(6))
    huge = {"a": {"dtype": "F32", "shape": [1 << 62, 4], "data_offsets": [0, 16]}}
    text = json.dumps(huge).encode()
    write(t, "overflowing_shape", struct.pack("<Q", len(text)) + text + bytes(16))


# -- Vulkan pipeline-cache files (devices/vulkan/pipeline_cache_file.h).

MAGIC = b"TSVKPC01"
UUID = bytes(i * 17 % 256 for i in range(16))  # pipeline_cache_fuzz.cc's device


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def sealed(payload):
    return MAGIC + struct.pack("<QQ", len(payload), fnv1a(payload)) + payload


def vulkan_header(vendor=0x10005, device=0, uuid=UUID, size=32, version=1):
    return struct.pack("<IIII", size, version, vendor, device) + uuid


def pipeline_cache_seeds():
    t = "pipeline_cache_fuzz"
    body = bytes(range(64))
    write(t, "matching", sealed(vulkan_header() + body))
    write(t, "matching_header_only", sealed(vulkan_header()))
    write(t, "other_device", sealed(vulkan_header(device=7) + body))
    write(t, "cut_off", sealed(vulkan_header() + body)[:40])
    write(t, "unsealed", vulkan_header() + body)
    write(t, "long_header_size", sealed(vulkan_header(size=200) + body))


# -- DLPack capsules, as dlpack_fuzz.cc reads its bytes: ndim, dtype code,
# bits, lanes==1?, one byte per size, strides?, one byte per stride,
# shape-present, data, byte offset.

def dlpack_seeds():
    t = "dlpack_fuzz"
    f32, i64, bf16, boolean = (2, 32), (0, 64), (4, 16), (6, 8)
    def program(ndim, dtype, sizes, strides=None, offset=0, data=0):
        out = bytes([ndim, dtype[0], dtype[1], 1]) + bytes(sizes)
        out += bytes([1 if strides is not None else 0]) + bytes(strides or [0] * ndim)
        return out + bytes([0, data, 0, offset])
    write(t, "scalar_f32", program(0, f32, []))
    write(t, "contiguous_2d", program(2, f32, [3, 4]))
    write(t, "transposed", program(2, i64, [3, 4], strides=[1, 3]))
    write(t, "broadcast", program(3, bf16, [2, 3, 4], strides=[0, 4, 1]))
    write(t, "empty", program(2, boolean, [0, 5]))
    write(t, "offset", program(1, f32, [5], strides=[2], offset=8))
    write(t, "misaligned", program(1, f32, [4], offset=2))


# -- op programs (op_fuzz.cc): the first byte picks the program (even:
# a conformance case, odd: the shapes program), the rest are its choices.
# Random bytes from a fixed seed; the fuzzer finds the structure.

def op_seeds():
    rng = random.Random(20261127)
    for i in range(48):
        program = bytes([i % 2]) + bytes(rng.randrange(256) for _ in range(64))
        write("op_fuzz", "program_%02d" % i, program)


if __name__ == "__main__":
    safetensors_seeds()
    pipeline_cache_seeds()
    dlpack_seeds()
    op_seeds()
