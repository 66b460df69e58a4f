"""A C++ library compiled once, as position-independent code, into one
shared object that every program, test and Python extension links.

Why: a cc_library that a static binary and a Python extension both link is
compiled twice by Bazel (.o and .pic.o), and each extension would carry its
own copy of the runtime (two device registries in one process). Built this
way, each source compiles once, libtessera.so holds the one runtime of a
process, and each device is its own libtessera_<device>.so on top of it,
as ggml ships a base library and one library per backend.

tessera_shared_library(name = "cpu", soname = "tessera_cpu", ...) declares:
  <name>_objects  the sources (alwayslink, so a device's static registration
                  is never dropped); only the shared object links it
  lib<soname>.so  the shared object: SONAME lib<soname>.so, RUNPATH $ORIGIN
                  (the libraries of a package sit in one folder)
  <name>          what everything else depends on: `hdrs` plus the shared
                  object, linked dynamically, and the public `deps`
"""

def tessera_shared_library(
        name,
        soname,
        srcs,
        hdrs,
        deps = [],
        private_deps = [],
        copts = [],
        linkopts = [],
        visibility = ["//visibility:public"]):
    """Declares <name>_objects, lib<soname>.so and <name>.

    Args:
      name: the target consumers depend on.
      soname: the shared object is lib<soname>.so.
      srcs: sources and private headers.
      hdrs: the public headers.
      deps: public dependencies (their headers are part of this library's
        interface; shared libraries among them are linked dynamically).
      private_deps: what only the sources use (Eigen, oneTBB, Vulkan...):
        compiled against and linked into the shared object, not passed on.
      copts: extra compiler options for the sources.
      linkopts: extra linker options for the shared object.
      visibility: of <name> and lib<soname>.so.
    """
    objects = name + "_objects"
    library = "lib%s.so" % soname
    native.cc_library(
        name = objects,
        srcs = srcs,
        hdrs = hdrs,
        copts = copts,
        deps = deps + private_deps,
        alwayslink = 1,
        # No per-library .so of Bazel's own: lib<soname>.so is the one.
        linkstatic = 1,
        visibility = ["//visibility:private"],
    )
    native.cc_binary(
        name = library,
        linkshared = 1,
        linkopts = linkopts + [
            "-Wl,-soname," + library,
            "-Wl,-rpath,$$ORIGIN",
        ],
        deps = [":" + objects],
        visibility = visibility,
    )
    native.cc_import(
        name = name + "_shared",
        shared_library = ":" + library,
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name,
        hdrs = hdrs,
        deps = deps + [":" + name + "_shared"],
        visibility = visibility,
    )
