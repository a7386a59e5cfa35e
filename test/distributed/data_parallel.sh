#!/usr/bin/env bash
# Runs the data-parallel training program as 1x4, 2x2 and 4x1 (instances x replicas) and checks
# that each passes and that the weights after every step are identical bit for bit.
#   data_parallel.sh <poprun> <program>
set -u
poprun=$1 program=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
POPDIST_NUM_LOCAL_REPLICAS=4 "$program" >"$out/1x4" 2>&1 || { cat "$out/1x4"; echo "FAILED: 1x4"; exit 1; }
for launch in "2 4" "4 4"; do
  set -- $launch
  "$poprun" --num-instances "$1" --num-replicas "$2" --only-output-from-instance 0 "$program" 2>&1 |
    sed 's/^\[[0-9,]*\]<[a-z]*>://' >"$out/$1x$(($2 / $1))"
  grep -q PASSED "$out/$1x$(($2 / $1))" || { cat "$out/$1x$(($2 / $1))"; echo "FAILED: $1x$(($2 / $1))"; exit 1; }
done
for launch in 2x2 4x1; do
  if ! diff <(grep '^step' "$out/1x4") <(grep '^step' "$out/$launch"); then
    echo "FAILED: weights of $launch differ from 1x4"
    exit 1
  fi
done
grep '^step' "$out/1x4"
echo "PASSED: 1x4, 2x2 and 4x1 hold identical weights after each of $(grep -c '^step' "$out/1x4") steps"
