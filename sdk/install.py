#!/usr/bin/env python3
"""Lays out Tessera's SDK in a prefix: what `./dev install --prefix DIR` runs.

  install.py --prefix DIR --check            checks (creates) DIR only
  install.py --prefix DIR --manifest FILE    installs what FILE lists

FILE is a manifest that //sdk:manifest or //sdk:manifest_quick wrote
(sdk/sdk_manifest.bzl): headers go to DIR/include, shared libraries to
DIR/lib, programs to DIR/bin. The libraries' RUNPATH becomes $ORIGIN and the
programs' $ORIGIN/../lib (Bazel links them with paths into its output tree),
so nothing installed refers back to this repository. Then the pkg-config
files (DIR/lib/pkgconfig) and the CMake package (DIR/lib/cmake/Tessera) are
written from sdk/templates/.

Installing again is cheap and changes only what changed: a file whose
source and installed copy are as recorded last time is not copied again,
generated files are rewritten only when their text differs, and files a
previous install put there that this one does not (a device built then and
not now) are removed. The record is DIR/share/tessera/install-record.json;
nothing outside it is ever removed.
"""

import argparse
import dataclasses
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The SDK's version, in its pkg-config and CMake files; the same as the
# Python module's (bindings/tessera/__init__.py).
VERSION = "0.1.0"

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "templates"
RECORD = Path("share/tessera/install-record.json")

# RUNPATH of what is installed, by manifest kind.
RUNPATHS = {"library": "$ORIGIN", "device": "$ORIGIN", "program": "$ORIGIN/../lib"}
MODES = {"header": 0o644, "library": 0o755, "device": 0o755, "program": 0o755}


class InstallError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Entry:
    kind: str    # header, library, device or program
    dest: str    # path in the prefix
    source: str  # path relative to the workspace root


def check_prefix(prefix: str) -> Path:
    """The prefix as an absolute path, created if missing; InstallError when
    it cannot be written."""
    if not prefix:
        raise InstallError("--prefix is empty: give the folder to install into, "
                           "e.g. ./dev install --prefix ~/.local/tessera")
    path = Path(os.path.abspath(Path(prefix).expanduser()))
    if path.exists() and not path.is_dir():
        raise InstallError(f"--prefix {path}: exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InstallError(f"--prefix {path}: cannot create it ({e.strerror or e})") from e
    try:
        # A real write, not os.access: root passes access checks on a
        # read-only file system.
        with tempfile.TemporaryFile(dir=path, prefix=".tessera-write-check-"):
            pass
    except OSError as e:
        raise InstallError(f"--prefix {path}: not writable ({e.strerror or e})") from e
    return path


def read_manifest(manifest: Path) -> list[Entry]:
    try:
        text = manifest.read_text()
    except OSError as e:
        raise InstallError(f"cannot read the manifest {manifest}: {e.strerror or e} "
                           "(bazel build //sdk:manifest_quick writes it)") from e
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != 3 or fields[0] not in MODES:
            raise InstallError(f"{manifest}:{number}: not `kind<TAB>dest<TAB>source`: {line!r}")
        entries.append(Entry(*fields))
    if not any(e.kind == "device" for e in entries):
        raise InstallError(f"{manifest} lists no device library")
    return entries


def load_record(prefix: Path) -> dict:
    try:
        record = json.loads((prefix / RECORD).read_text())
        return record if isinstance(record.get("files"), dict) else {"files": {}}
    except (OSError, ValueError):
        return {"files": {}}


def stat_key(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def set_runpath(path: Path, runpath: str) -> None:
    patchelf = shutil.which("patchelf")
    if patchelf is None:
        raise InstallError("patchelf not found: ./dev setup installs it (Debian package patchelf)")
    result = subprocess.run([patchelf, "--set-rpath", runpath, str(path)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise InstallError(f"patchelf --set-rpath {runpath} {path}: {result.stderr.strip()}")


def replace_if_different(temporary: Path, dest: Path) -> bool:
    """Moves temporary to dest unless dest already has its bytes; True when
    dest changed. A rename, never a write into dest: a running program may
    have the old library mapped."""
    if dest.is_file() and filecmp.cmp(temporary, dest, shallow=False):
        temporary.unlink()
        return False
    os.replace(temporary, dest)
    return True


def install_file(entry: Entry, prefix: Path, root: Path, old: dict | None) -> tuple[bool, dict]:
    """Copies entry into prefix unless unchanged since the last install;
    returns (changed, its record)."""
    source = root / entry.source
    dest = prefix / entry.dest
    try:
        source_key = stat_key(source)
    except OSError as e:
        raise InstallError(f"{entry.source} (for {entry.dest}) is missing: {e.strerror or e}; "
                           "was the manifest built in this workspace?") from e
    if (old and old.get("source") == entry.source and old.get("source_stat") == source_key
            and dest.is_file() and old.get("stat") == stat_key(dest)):
        return False, old
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
    os.close(fd)
    temporary = Path(name)
    try:
        shutil.copyfile(source, temporary)
        os.chmod(temporary, MODES[entry.kind])
        if entry.kind in RUNPATHS:
            set_runpath(temporary, RUNPATHS[entry.kind])
        changed = replace_if_different(temporary, dest)
    finally:
        temporary.unlink(missing_ok=True)
    return changed, {"source": entry.source, "source_stat": source_key, "stat": stat_key(dest)}


def render(template: str, values: dict[str, str]) -> str:
    text = (TEMPLATES / template).read_text()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    left = re.search(r"@[A-Z_]+@", text)
    if left:
        raise InstallError(f"sdk/templates/{template}: no value for {left.group()}")
    return text


def generated_files(prefix: Path, devices: list[str]) -> dict[str, str]:
    """Path in the prefix -> text of the pkg-config and CMake files."""
    major, minor = VERSION.split(".")[:2]
    common = {"PREFIX": str(prefix), "VERSION": VERSION}
    files = {
        "lib/pkgconfig/tessera.pc": render("tessera.pc.in", common),
        "lib/pkgconfig/tessera-models.pc": render("tessera-models.pc.in", common),
        "lib/pkgconfig/tessera-embed.pc": render(
            "tessera-embed.pc.in",
            {**common, "DEVICE_LIBS": ",".join(f"-ltessera_{d}" for d in devices)}),
        "lib/cmake/Tessera/TesseraConfig.cmake": render(
            "TesseraConfig.cmake.in", {**common, "DEVICES": ";".join(devices)}),
        "lib/cmake/Tessera/TesseraConfigVersion.cmake": render(
            "TesseraConfigVersion.cmake.in",
            {**common, "VERSION_MAJOR": major, "VERSION_MINOR": minor}),
    }
    for device in devices:
        files[f"lib/pkgconfig/tessera-{device}.pc"] = render(
            "tessera-device.pc.in", {**common, "DEVICE": device})
    return files


def write_if_different(path: Path, text: str) -> bool:
    if path.is_file() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(name, 0o644)
    os.replace(name, path)
    return True


def remove_stale(prefix: Path, stale: list[str]) -> None:
    """Removes files an earlier install put in prefix, and the folders they
    leave empty (never the prefix itself)."""
    for dest in stale:
        path = prefix / dest
        path.unlink(missing_ok=True)
        folder = path.parent
        while folder != prefix and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent


def device_name(entry: Entry) -> str:
    name = Path(entry.dest).name
    if not (name.startswith("libtessera_") and name.endswith(".so")):
        raise InstallError(f"{entry.source}: a device library must be named libtessera_<device>.so")
    return name[len("libtessera_"):-len(".so")]


def install(prefix: Path, manifest: Path, root: Path) -> str:
    entries = read_manifest(manifest)
    record = load_record(prefix)
    files: dict[str, dict] = {}
    copied = 0
    for entry in entries:
        changed, files[entry.dest] = install_file(entry, prefix, root,
                                                  record["files"].get(entry.dest))
        copied += changed
    devices = [device_name(e) for e in entries if e.kind == "device"]
    for dest, text in generated_files(prefix, devices).items():
        copied += write_if_different(prefix / dest, text)
        files[dest] = {"generated": True}
    stale = sorted(set(record["files"]) - set(files))
    remove_stale(prefix, stale)
    write_if_different(prefix / RECORD, json.dumps(
        {"version": VERSION, "manifest": str(manifest), "files": files}, indent=1, sort_keys=True) + "\n")
    return (f"{prefix}: {len(files)} files, {copied} updated, {len(stale)} removed; "
            f"devices: {', '.join(devices)}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefix", required=True, help="the folder to install into")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true",
                        help="only check that the prefix can be written (creating it)")
    action.add_argument("--manifest", type=Path, help="what to install (//sdk:manifest*.tsv)")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the workspace root the manifest's paths start from")
    args = parser.parse_args(argv)
    try:
        prefix = check_prefix(args.prefix)
        if args.manifest is not None:
            print(f"install: {install(prefix, args.manifest, args.root)}")
    except InstallError as e:
        print(f"install: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
