#!/bin/sh
# Prints nvcc's -gencode flags for a TESSERA_CUDA_ARCHS list such as
# "sm_90,compute_80" (cuda.bzl).
#
# nvcc runs its front end (cicc, as long as the host compile) once per
# virtual architecture, then ptxas once per real one. Machine code for
# sm_XX may come from any virtual architecture compute_YY with YY <= XX, so
# each sm_XX is assembled from the newest listed compute_YY not newer than
# it (its own compute_XX when none is listed), and each listed compute_YY
# is embedded as PTX: "sm_90,compute_80" is one front-end pass, not two.
set -eu
archs=$(echo "$1" | tr ',' ' ')
virtuals=""
reals=""
for arch in $archs; do
  case $arch in
    compute_[0-9]*) virtuals="$virtuals ${arch#compute_}" ;;
    sm_[0-9]*) reals="$reals ${arch#sm_}" ;;
    *) echo "TESSERA_CUDA_ARCHS: '$arch' is neither sm_XX nor compute_XX" >&2; exit 1 ;;
  esac
done
# "virtual:code" pairs, then grouped by virtual architecture.
pairs=""
for v in $virtuals; do pairs="$pairs $v:compute_$v"; done
for r in $reals; do
  source=""
  for v in $virtuals; do
    if [ "$v" -le "$r" ] && { [ -z "$source" ] || [ "$v" -gt "$source" ]; }; then source=$v; fi
  done
  pairs="$pairs ${source:-$r}:sm_$r"
done
flags=""
for v in $(for p in $pairs; do echo "${p%%:*}"; done | sort -un); do
  codes=$(for p in $pairs; do [ "${p%%:*}" = "$v" ] && echo "${p#*:}"; done | sort -u | paste -sd, -)
  flags="$flags -gencode=arch=compute_$v,code=[$codes]"
done
echo "$flags"
