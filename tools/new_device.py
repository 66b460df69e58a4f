#!/usr/bin/env python3
"""Creates a new device from the template: `./dev new-device NAME`.

Copies devices/template to devices/NAME with every name of the template
renamed (template_device -> NAME_device, TemplateStream -> NameStream,
TESSERA_TEMPLATE_* -> TESSERA_NAME_*, "template:0" -> "NAME:0", ...; the
C++ keyword `template` is left alone), copies its device test and its
bridge test, and registers the device where the build lists devices:
  devices/BUILD                 the //devices library and the shared-library lists
  tests/conformance/BUILD       conformance_NAME_test
  tests/conformance/conformance.cc   known_device_types()
  tests/devices/BUILD           NAME_device_test, NAME_device_bad_env_test
The new device builds and passes the conformance suite at once (its kernels
are the template's; everything else runs through the CPU fallback). Like
the template, it stays off the bridge's default device list until you
remove the set_listed_by_default line at the end of NAME_device.cc.

--root DIR works on another copy of the tree (the generator's own test).
"""

import argparse
import keyword
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{1,30}$")
CPP_KEYWORDS = {
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char",
    "class", "concept", "const", "constexpr", "continue", "default", "delete", "do", "double",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
    "operator", "or", "private", "protected", "public", "register", "requires", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw",
    "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
    "void", "volatile", "while",
}
# Names already used by a device type or a runtime concept.
RESERVED = {"cpu", "cuda", "vulkan", "template", "common", "host", "fake_alloc", "meta"}


def fail(message):
    sys.exit(f"new-device: {message}")


def camel(name):
    return "".join(part.capitalize() for part in name.split("_"))


def rename(text, name):
    """The template's names in text, renamed for device `name`."""
    text = text.replace("TEMPLATE", name.upper())
    text = text.replace("Template", camel(name))
    # "template" is the device's name except where it is the C++ keyword,
    # which is always followed by "<" (template <typename T>, template<...>).
    return re.sub(r"template(?!\s*<)", name, text)


def edit(path, old, new, what):
    text = path.read_text()
    if old not in text:
        fail(f"{path}: cannot find {what}; was the file changed by hand?")
    path.write_text(text.replace(old, new, 1))


def copy_renamed(src, dst, name):
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(rename(src.read_text(), name))
    shutil.copymode(src, dst)


def register_in_build(root, name):
    # devices/BUILD: the library every program links and both lists of
    # shared libraries the bridge's package ships.
    devices = root / "devices" / "BUILD"
    text = devices.read_text()
    count = text.count('"//devices/template",')
    lib_count = text.count('"//devices/template:libtessera_template.so",')
    if count != 1 or lib_count != 2:
        fail("devices/BUILD does not list //devices/template as expected (once in :devices, "
             "twice among the shared libraries)")
    text = text.replace('        "//devices/template",\n',
                        f'        "//devices/template",\n        "//devices/{name}",\n')
    text = text.replace('        "//devices/template:libtessera_template.so",\n',
                        '        "//devices/template:libtessera_template.so",\n'
                        f'        "//devices/{name}:libtessera_{name}.so",\n')
    devices.write_text(text)

    edit(root / "tests" / "conformance" / "BUILD", '    ("template", "medium", 2),\n',
         f'    ("template", "medium", 2),\n    ("{name}", "medium", 2),\n',
         "the template's conformance test")
    # known_device_types(): the name appended to the list (which may hold
    # devices generated before this one).
    conformance = root / "tests" / "conformance" / "conformance.cc"
    text = conformance.read_text()
    types = re.search(r'static const std::vector<std::string> types = \{[^}]*"template"[^}]*', text)
    if types is None:
        fail(f"{conformance}: cannot find known_device_types(); was the file changed by hand?")
    conformance.write_text(text[:types.end()] + f', "{name}"' + text[types.end():])

    # tests/devices/BUILD: the template's device-test targets, renamed.
    tests = root / "tests" / "devices" / "BUILD"
    text = tests.read_text()
    start = text.find("# The template device:")
    if start < 0:
        fail("tests/devices/BUILD has no template device tests to copy")
    end = text.find("\n\n#", start)  # the next commented block, if any
    block = text[start:] if end < 0 else text[start:end + 1]
    if f'name = "{name}_device_test"' in text:
        fail(f"tests/devices/BUILD already has {name}_device_test")
    tests.write_text(text.rstrip("\n") + "\n\n" + rename(block, name).rstrip("\n") + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the device type name: lower case, digits and _")
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree to work on")
    args = parser.parse_args()
    name, root = args.name, args.root.resolve()
    if not NAME_PATTERN.match(name):
        fail(f"'{name}' is not a device name: use 2-31 lower-case letters, digits and _, "
             "starting with a letter")
    if name in CPP_KEYWORDS or keyword.iskeyword(name) or name in RESERVED:
        fail(f"'{name}' is reserved (a C++ or Python keyword, or an existing name)")
    template = root / "devices" / "template"
    target = root / "devices" / name
    if not template.is_dir():
        fail(f"{template} not found")
    if target.exists():
        fail(f"{target} already exists")

    for src in sorted(template.rglob("*")):
        if src.is_file():
            relative = src.relative_to(template)
            dst = target / rename(str(relative), name)
            copy_renamed(src, dst, name)
    copy_renamed(root / "tests" / "devices" / "template_device_test.cc",
                 root / "tests" / "devices" / f"{name}_device_test.cc", name)
    copy_renamed(root / "tests" / "bridge" / "test_template_device.py",
                 root / "tests" / "bridge" / f"test_{name}_device.py", name)
    register_in_build(root, name)
    print(f"new-device: devices/{name}/ created from devices/template/, with its tests\n"
          f"  build and test it: ./dev test //devices/{name}/... "
          f"//tests/devices:{name}_device_test //tests/conformance:conformance_{name}_test\n"
          f"  how complete it is: ./dev device-report {name}\n"
          "  the guide: docs/adding-a-device.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
