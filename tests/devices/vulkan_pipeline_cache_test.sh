#!/usr/bin/env bash
# The on-disk pipeline cache: a first run writes it, a second run loads
# it, and a corrupt file is ignored (the run still works and rewrites it).
set -euo pipefail
probe="$1"
dir="${TEST_TMPDIR:-$(mktemp -d)}/pipeline-cache"
export TESSERA_VULKAN_PIPELINE_CACHE="$dir"

first="$("$probe")"
echo "first run:  $first"
if [[ "$first" == no-vulkan ]]; then
  echo "tessera-test-summary: passed=0 failed=0 skipped=1"
  exit 0
fi
path="$(sed -n 's/^path=\([^ ]*\) .*/\1/p' <<<"$first")"
[[ "$path" == "$dir"/*.bin ]] || { echo "FAIL: cache path $path is not under $dir"; exit 1; }
[[ "$first" == *" loaded=0 "* ]] || { echo "FAIL: a fresh directory had a cache"; exit 1; }
[[ "$first" != *" saved=0" ]] || { echo "FAIL: nothing was saved"; exit 1; }
[[ -s "$path" ]] || { echo "FAIL: $path is missing or empty"; exit 1; }

second="$("$probe")"
echo "second run: $second"
[[ "$second" != *" loaded=0 "* ]] || { echo "FAIL: the second run did not load the cache"; exit 1; }

# A file cut off mid-write (a crash, a full disk) keeps a valid header:
# the envelope's length must reject it, and the run rebuilds the file.
size="$(stat -c %s "$path")"
truncate -s $((size / 2)) "$path"
cut="$("$probe")"
echo "cut off:    $cut"
[[ "$cut" == *" loaded=0 "* ]] || { echo "FAIL: a cut-off cache file was loaded"; exit 1; }
[[ "$cut" != *" saved=0" ]] || { echo "FAIL: the cut-off file was not replaced"; exit 1; }

# One byte changed in the driver's data: the checksum must reject it.
byte="$(od -An -tu1 -j $((size - 7)) -N1 "$path" | tr -d ' ')"
printf "\\x$(printf %02x $((byte ^ 255)))" | dd of="$path" bs=1 seek=$((size - 7)) \
  conv=notrunc status=none
flipped="$("$probe")"
echo "flipped:    $flipped"
[[ "$flipped" == *" loaded=0 "* ]] || { echo "FAIL: a damaged cache file was loaded"; exit 1; }
rebuilt="$("$probe")"
[[ "$rebuilt" != *" loaded=0 "* ]] || { echo "FAIL: the rebuilt cache was not loaded"; exit 1; }

head -c 4096 /dev/urandom > "$path"
third="$("$probe")"
echo "corrupt:    $third"
[[ "$third" == *" loaded=0 "* ]] || { echo "FAIL: a corrupt cache file was loaded"; exit 1; }
[[ "$third" != *" saved=0" ]] || { echo "FAIL: the corrupt file was not replaced"; exit 1; }

export TESSERA_VULKAN_PIPELINE_CACHE=off
off="$("$probe")"
echo "off:        $off"
[[ "$off" == "path= loaded=0 saved=0" ]] || { echo "FAIL: 'off' still used a cache"; exit 1; }
echo "tessera-test-summary: passed=1 failed=0 skipped=0"
