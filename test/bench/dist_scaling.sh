#!/usr/bin/env bash
# Weak scaling of instances on one machine: the same Engine program per instance, run as 1, 2
# and 4 instances with poprun; prints each time and the ratio to one instance.
#   test/bench/dist_scaling.sh [build dir]
set -euo pipefail
build=${1:-build}
bench=$build/test/bin/dist_bench
declare -A times
for n in 1 2 4; do
  line=$("$build/sdk/bin/poprun" --num-instances "$n" --num-replicas "$n" "$bench" work | grep "weak scaling")
  times[$n]=$(sed -E 's/.*: ([0-9.]+) ms/\1/' <<<"$line")
  echo "$line" | sed 's/^\[[0-9,]*\]<stdout>://'
done
for n in 2 4; do
  echo "ratio ${n} instances / 1: $(awk -v a="${times[$n]}" -v b="${times[1]}" 'BEGIN { printf "%.2f", a / b }')"
done
