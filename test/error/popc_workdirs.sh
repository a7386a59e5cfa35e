#!/usr/bin/env bash
# Issue 25, item 5: popc leaves no work directory behind when its compile fails or when it is
# stopped by SIGTERM or SIGINT in the middle of a compile.
#   popc_workdirs.sh <popc> <work dir>
set -u
popc=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
export ASPEN_CACHE_DIR=$work/cache
failures=0
leftovers() { find "$ASPEN_CACHE_DIR/codelets/tmp" -mindepth 1 2>/dev/null | wc -l; }

cat >"$work/broken.cpp" <<'SRC'
#include <poplar/Vertex.hpp>
class Broken : public poplar::Vertex {
public:
  poplar::Output<float> out;
  bool compute() { out = undefined_name; return true; }
};
SRC
"$popc" "$work/broken.cpp" -o "$work/broken.gp" >/dev/null 2>&1 && { echo "FAIL: the broken source compiled"; failures=$((failures + 1)); }
if [[ $(leftovers) -ne 0 ]]; then
  echo "FAIL: a failed compile left $(leftovers) files: $(find "$ASPEN_CACHE_DIR/codelets/tmp" -mindepth 1)"
  failures=$((failures + 1))
else
  echo "ok    a failed compile leaves no work directory"
fi

for sig in TERM INT; do
  # A fresh source each time (a cache hit would make no work directory).
  {
    echo '#include <poplar/Vertex.hpp>'
    echo "class Slow$sig : public poplar::Vertex {"
    echo 'public:'
    echo '  poplar::Output<float> out;'
    echo '  bool compute() { out = 1.0f; return true; }'
    echo '};'
  } >"$work/slow$sig.cpp"
  "$popc" "$work/slow$sig.cpp" -o "$work/slow$sig.gp" >/dev/null 2>&1 &
  pid=$!
  seen=0
  for _ in $(seq 1 2000); do
    if [[ $(leftovers) -ne 0 ]]; then
      seen=1
      break
    fi
    sleep 0.005
  done
  kill -$sig $pid 2>/dev/null
  wait $pid
  status=$?
  if [[ $seen -eq 0 ]]; then
    echo "FAIL: SIG$sig: never saw a work directory to interrupt (status $status)"
    failures=$((failures + 1))
  elif [[ $(leftovers) -ne 0 ]]; then
    echo "FAIL: SIG$sig left $(leftovers) files: $(find "$ASPEN_CACHE_DIR/codelets/tmp" -mindepth 1 | head -5)"
    failures=$((failures + 1))
  else
    echo "ok    SIG$sig mid-compile leaves no work directory (status $status)"
  fi
done

if [[ $failures -ne 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "PASSED: no work directory left behind"
