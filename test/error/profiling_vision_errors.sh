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

# Issue 25: nesting 100,000 deep (JSON and CBOR) is refused, not a stack overflow; a JSON
# array is not "truncated"; a target of 2e9 tiles is refused before the page tries to draw it.
python3 -c 'import sys; sys.stdout.write("[" * 100000 + "]" * 100000)' >"$work/deep.json"
python3 -c 'import sys; sys.stdout.buffer.write(b"\x81" * 100000 + b"\x00")' >"$work/deep.pop"
echo '[1,2,3]' >"$work/array.json"
echo '{"format":"aspen-profile","version":2,"target":{"numTiles":2000000000}}' >"$work/huge.json"
expect_failure deep_json "$work/deep.json': it nests deeper than 256 levels" "$work/deep.json"
expect_failure deep_cbor "$work/deep.pop': it nests deeper than 256 levels" "$work/deep.pop"
expect_failure array "$work/array.json': it is not a JSON object" "$work/array.json"
expect_failure huge "$work/huge.json': \"target\".\"numTiles\" is 2000000000, more than" "$work/huge.json"
out=$("$tool" "$work/array.json" -o "$work/array2.html" 2>&1)
if [[ $out == *truncated* ]]; then
  echo "FAIL  array: reported as truncated: $out"
  failures=$((failures + 1))
fi

# A report whose path holds the page's placeholders: the page stays whole (one script, the data
# where it belongs), and the names appear escaped as given.
mkdir -p "$work/@CSS@@DATA@@JS@"
echo "$good" >"$work/@CSS@@DATA@@JS@/profile.json"
# A host trace beside it with lines of every wrong shape: skipped, never an exception.
{
  echo '{"ph":1}'
  echo '{"ph":"B","tid":"x","ch":3,"name":4,"ts":"t"}'
  echo '{"ph":"E","tid":"x","ch":3,"ts":[]}'
  python3 -c 'import sys; sys.stdout.write("[" * 100000 + "\n")'
  echo 'not json'
} >"$work/@CSS@@DATA@@JS@/bad.pvti"
"$tool" "$work/good.json" -o "$work/good-page.html" >/dev/null 2>&1
if "$tool" "$work/@CSS@@DATA@@JS@/profile.json" -o "$work/placeholders.html" >"$work/placeholders.log" 2>&1 &&
  [[ $(grep -c '<script' "$work/placeholders.html") -eq $(grep -c '<script' "$work/good-page.html") ]] &&
  [[ $(wc -c <"$work/placeholders.html") -lt $(($(wc -c <"$work/good-page.html") + 2000)) ]] &&
  grep -q '@CSS@@DATA@@JS@' "$work/placeholders.html"; then
  echo "ok    placeholders: the page is whole"
else
  echo "FAIL  placeholders: $(cat "$work/placeholders.log")"
  failures=$((failures + 1))
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
