"""Forwards rules_cc's names to Bazel's native C++ rules.

Bazel 4.2.3 loads @rules_cc//cc:defs.bzl from @bazel_tools; Debian's
bazel-rules-cc is too new for it, so this tiny repository stands in.
"""

cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_proto_library = native.cc_proto_library
cc_shared_library = getattr(native, "cc_shared_library", None)
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
fdo_prefetch_hints = native.fdo_prefetch_hints
fdo_profile = native.fdo_profile
objc_import = native.objc_import
objc_library = native.objc_library
