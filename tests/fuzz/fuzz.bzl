"""tessera_fuzz_target: one fuzz target, two builds.

In a normal build `NAME` is a cc_test that replays the target's seed
corpus (corpus/NAME) and the kept crash inputs (regressions/NAME) through
replay_main.cc, so every input that ever found a bug stays a test. Under
`--config=fuzz` (clang, libFuzzer, ASan+UBSan) the same target links
libFuzzer's main instead, and `./dev fuzz NAME SECONDS` runs it.
"""

def tessera_fuzz_target(name, srcs, deps = [], size = "small", **kwargs):
    corpus = "corpus/" + name
    regressions = "regressions/" + name
    native.cc_test(
        name = name,
        size = size,
        srcs = srcs,
        # Paths from the runfiles root, where Bazel runs tests; a folder
        # with no inputs yet is absent there, which replay_main accepts.
        args = [native.package_name() + "/" + corpus, native.package_name() + "/" + regressions],
        data = native.glob([corpus + "/**", regressions + "/**"]),
        linkopts = select({
            "//tests/fuzz:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = deps + ["//tests/fuzz:fuzz_input"] + select({
            "//tests/fuzz:fuzzing": [],
            "//conditions:default": ["//tests/fuzz:replay_main"],
        }),
        **kwargs
    )
