"""What `./dev install` copies into a prefix, as one manifest file.

sdk_manifest(name, header_deps, libraries, devices, programs) writes
<name>.tsv, one line per file to install: `<kind>\t<path in the
prefix>\t<path to copy>`, the source path relative to the workspace root
(under bazel-out/ for what was built). Kinds: `header` (include/<path as the
repository spells it, so `#include "runtime/tessera.h"` works as written),
`library` and `device` (lib/; a device library registers a device when
loaded, and gets a pkg-config file and a CMake target of its own) and
`program` (bin/). sdk/install.py reads it.

The headers are the public headers (`hdrs`) of header_deps and of their
public deps, read from CcInfo: whatever a library's BUILD globs today is
installed, and the headers of private deps (Eigen, oneTBB, ICU, ...) never
are, since tessera_shared_library keeps those out of the public target.
"""

def _install_path(f):
    # Headers keep the path the repository includes them by; Bazel spells
    # a source file of an external repository (@tessera//, from another
    # workspace) ../tessera/<path>.
    path = f.short_path
    if path.startswith("../"):
        path = path.split("/", 2)[2]
    return path

def _basename(f):
    return f.basename

def _sdk_manifest_impl(ctx):
    own_workspace = ctx.label.workspace_name
    lines = []
    inputs = []
    headers = {}
    for dep in ctx.attr.header_deps:
        for f in dep[CcInfo].compilation_context.headers.to_list():
            # Only this repository's own headers (not a system library's).
            if f.owner.workspace_name != own_workspace or not f.is_source:
                continue
            headers[_install_path(f)] = f
    for path in sorted(headers):
        lines.append("header\tinclude/%s\t%s" % (path, headers[path].path))
        inputs.append(headers[path])
    for kind, targets in [("library", ctx.attr.libraries), ("device", ctx.attr.devices)]:
        for target in targets:
            for f in sorted(target[DefaultInfo].files.to_list(), key = _basename):
                if not f.basename.endswith(".so"):
                    fail("%s: %s is not a shared library" % (target.label, f.path))
                lines.append("%s\tlib/%s\t%s" % (kind, f.basename, f.path))
                inputs.append(f)
    for target in ctx.attr.programs:
        executable = target[DefaultInfo].files_to_run.executable
        if executable == None:
            fail("%s is not an executable" % target.label)
        # tessera-embed_quick installs as tessera-embed: the same program
        # with fewer devices linked.
        name = executable.basename
        if name.endswith("_quick"):
            name = name[:-len("_quick")]
        lines.append("program\tbin/%s\t%s" % (name, executable.path))
        inputs.append(executable)
    out = ctx.actions.declare_file(ctx.label.name + ".tsv")
    ctx.actions.write(out, "\n".join(lines) + "\n")
    # The manifest's files are built with it, so that one `bazel build`
    # of it leaves everything it names in place.
    return [DefaultInfo(files = depset([out] + inputs))]

sdk_manifest = rule(
    implementation = _sdk_manifest_impl,
    attrs = {
        "header_deps": attr.label_list(
            providers = [CcInfo],
            doc = "C++ libraries whose public headers (transitively) go to include/.",
        ),
        "libraries": attr.label_list(
            allow_files = [".so"],
            doc = "Shared objects (or filegroups of them) for lib/.",
        ),
        "devices": attr.label_list(
            allow_files = [".so"],
            doc = "Device libraries, libtessera_<device>.so, for lib/.",
        ),
        "programs": attr.label_list(
            cfg = "target",
            doc = "Executables for bin/.",
        ),
    },
)
