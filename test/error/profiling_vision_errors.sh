#!/bin/bash
# Copyright (c) Aspen contributors.
# aspen-vision on reports it cannot read: it exits non-zero with a message naming
# the file and what is wrong, and writes no page.
# usage: profiling_vision_errors.sh ASPEN_VISION WORK_DIR
set -u
tool=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
failures=0

expect_failure() { # name, expected message part, inputs...
  local name=$1 expected=$2
  shift 2
  local out status
  out=$("$tool" "$@" -o "$work/$name.html" 2>&1)
  status=$?
  if [[ $status -ne 0 && $out == *"$expected"* && ! -e $work/$name.html ]]; then
    echo "ok    $name: exit $status: $out"
  else
    echo "FAIL  $name: exit $status, expected a message with '$expected', got: $out"
    failures=$((failures + 1))
  fi
}

good='{"format":"aspen-profile","version":2,"target":{"numTiles":4}}'
printf '%s' "${good:0:40}" >"$work/truncated.json"
echo '{"traceEvents": []}' >"$work/foreign.json"
echo '{"format":"aspen-profile","version":3,"target":{"numTiles":4}}' >"$work/newer.json"
echo 'not json at all' >"$work/garbage.json"
: >"$work/empty.json"
mkdir -p "$work/emptydir"

expect_failure truncated "$work/truncated.json': the file is truncated" "$work/truncated.json"
expect_failure foreign "$work/foreign.json': it is not an Aspen profile" "$work/foreign.json"
expect_failure newer "$work/newer.json': format version 3 is newer than this reader understands (2)" "$work/newer.json"
expect_failure garbage "$work/garbage.json': it is not valid JSON or CBOR" "$work/garbage.json"
expect_failure empty "$work/empty.json': the file is empty" "$work/empty.json"
expect_failure emptydir "$work/emptydir': the directory holds no profile.json or profile.pop" "$work/emptydir"
expect_failure missing "$work/nothere.json': no such file" "$work/nothere.json"
# Compare mode names the bad one of the two.
echo "$good" >"$work/good.json"
expect_failure compare_newer "$work/newer.json': format version 3" "$work/good.json" "$work/newer.json"

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
