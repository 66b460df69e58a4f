#!/usr/bin/env python3
"""Finds x86-64 instructions beyond a baseline in shipped shared objects.

A wheel or library built with -march=native dies with SIGILL on a CPU
without the build machine's extensions (AVX-512 on this one). This scans
each ELF object's disassembly (objdump) for AVX-512 code: zmm registers,
mask registers, the upper 16 xmm/ymm registers, and EVEX-only mnemonics.
Functions whose names contain a marker of an explicitly dispatched variant
(`avx512`, as in `..._avx512`) are allowed: the code that calls them checks
CPUID first.

    tools/check_isa.py FILE_OR_DIR...      # exit 1 and a report when found

Prints per object the functions with AVX-512 instructions (up to 10, with
one example line each).
"""

import re
import subprocess
import sys
from pathlib import Path

DISPATCHED_MARKERS = ("avx512",)

_REGISTERS = re.compile(r"%zmm\d+|%k[1-7]\b|%[xy]mm(?:1[6-9]|2\d|3[01])\b")
_EVEX_ONLY = re.compile(
    r"^\s*(?:k(?:mov|or|and|not|xor|xnor|shift|test|add|unpck)[bwdq]?\w*|"
    r"vpternlog[dq]|vperm[it]2\w+|vrange\w+|vrndscale\w+|vgetexp\w+|vgetmant\w+|"
    r"vfixupimm\w+|vscalef\w+|vp?compress\w+|vp?expand\w+|vpconflict\w+|vplzcnt\w+|"
    r"vpmov\w*2m|vpmovm2\w+|vcvt(?:u?qq|t?p[sd]2u?qq|t?p[sd]2udq|udq2p[sd])\w*|"
    r"v(?:extract|insert)[if](?:32x4|64x2|32x8|64x4)|vbroadcast[if](?:32x[248]|64x[24])|"
    r"valign[dq]|vpermw|vpermb|vpsraq|vpabsq|vp(?:max|min)[su]q|vpmullq|vpro[lr]v?[dq]|"
    r"vps[lr]lvw|vpsravw|vdbpsadbw|vpmultishiftqb|vpshl?d|vpshrd|vpopcnt[bwdq]|"
    r"vcvtne2ps2bf16|vdpbf16ps|vp4dpwssds?|v4fmadd\w+)\b")


def functions_with_avx512(path: Path):
    """{function name: first offending line} for one ELF object."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "att", str(path)],
                         capture_output=True, text=True, check=True).stdout
    found = {}
    function = "?"
    for line in out.splitlines():
        if line.endswith(">:"):
            function = line[line.find("<") + 1:-2]
            continue
        if function in found or "\t" not in line:
            continue
        instruction = line.split("\t", 1)[1]
        if _REGISTERS.search(instruction) or _EVEX_ONLY.match(instruction):
            found[function] = instruction.strip()
    return {f: i for f, i in found.items()
            if not any(m in f.lower() for m in DISPATCHED_MARKERS)}


def shared_objects(arguments):
    for argument in arguments:
        p = Path(argument)
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*.so*") if q.is_file())
        else:
            yield p


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    bad = 0
    for so in shared_objects(argv):
        found = functions_with_avx512(so)
        if not found:
            continue
        bad += 1
        print(f"{so}: {len(found)} function(s) use AVX-512 without a dispatch marker, e.g.")
        for function, instruction in list(found.items())[:10]:
            print(f"  {function[:120]}: {instruction}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
