#!/bin/bash
# Copyright (c) Aspen contributors.
# What writing the profile costs the flagship sample: the same program run
# without and with autoReport.all (profile.json, profile.pop and report.html),
# alternately, best of N each, from a warm compile cache. Prints the ratio.
# usage: profiling_report_overhead.sh SAMPLE [N]   (SAMPLE: build/samples/heat_equation)
set -euo pipefail
sample=$1
n=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$sample" >/dev/null 2>&1 # warm the compile cache
best() { sort -g | head -1; }
plain=() report=()
for _ in $(seq "$n"); do
  s=$(date +%s.%N); POPLAR_ENGINE_OPTIONS= "$sample" >/dev/null 2>&1; e=$(date +%s.%N)
  plain+=("$(echo "$e - $s" | bc)")
  s=$(date +%s.%N)
  POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}' "$sample" >/dev/null 2>&1
  e=$(date +%s.%N)
  report+=("$(echo "$e - $s" | bc)")
done
p=$(printf '%s\n' "${plain[@]}" | best)
r=$(printf '%s\n' "${report[@]}" | best)
echo "without report: best ${p} s of: ${plain[*]}"
echo "with autoReport.all: best ${r} s of: ${report[*]}"
ls -l report | sed 's/^/  /'
echo "overhead: $(echo "scale=1; 100 * ($r - $p) / $p" | bc) % (target <= 10 %)"
