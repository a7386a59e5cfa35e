#!/usr/bin/env bash
# Issue 25, item 3: instances that call different collectives, or one that ends while the
# other waits, make every instance fail within seconds with an error naming both sides.
#   collective_faults.sh <poprun> <program>
set -u
poprun=$1 program=$2
failures=0
run() { # mode [deadline] -> output in $out, status in $status, seconds in $took
  local start=$SECONDS
  out=$(ASPEN_DIST_TIMEOUT=${2:-120} timeout 100 "$poprun" --num-instances 2 --num-replicas 2 "$program" "$1" 2>&1)
  status=$?
  took=$((SECONDS - start))
  echo "--- $1: status $status after $took s"
  echo "$out"
}
expect() { # description, pattern
  if ! grep -qE -- "$2" <<<"$out"; then
    echo "FAILED: $1 (no line matching '$2')"
    failures=$((failures + 1))
  fi
}

run mismatch
expect "instance 0 names both calls" "instance 0 caught: .*this instance called allReduce\(float, 4 elements, SUM\).*instance 1 called broadcast\(16 bytes, root 0\)"
expect "instance 1 names both calls" "instance 1 caught: .*this instance called broadcast\(16 bytes, root 0\).*instance 0 called allReduce\(float, 4 elements, SUM\)"
[[ $took -lt 30 ]] || { echo "FAILED: mismatch took $took s"; failures=$((failures + 1)); }
[[ $status -eq 0 ]] || { echo "FAILED: mismatch: the instances caught their errors, yet status $status"; failures=$((failures + 1)); }

run early
expect "the waiting instance names the ended one" "instance 1 caught: .*this instance called allReduce\(float, 4 elements, SUM\).*instance 0 called nothing more \(the program ended\)"
expect "the ended instance names the waiting one" "the end of the program.*instance 1 called allReduce"
[[ $took -lt 30 ]] || { echo "FAILED: early end took $took s"; failures=$((failures + 1)); }
[[ $status -ne 0 ]] || { echo "FAILED: early end: the job reported success"; failures=$((failures + 1)); }

run gcl
expect "instance 0 names both GCL collectives" "instance 0 caught: .*this instance called allReduceCrossReplica\(float, 16 bytes per replica, ADD, ALL groups of 2\).*instance 1 called allGatherCrossReplica\(float, 16 bytes per replica, ALL groups of 2\)"
expect "instance 1 names both GCL collectives" "instance 1 caught: .*this instance called allGatherCrossReplica.*instance 0 called allReduceCrossReplica"
[[ $took -lt 60 ]] || { echo "FAILED: gcl mismatch took $took s"; failures=$((failures + 1)); }
[[ $status -eq 0 ]] || { echo "FAILED: gcl mismatch: the instances caught their errors, yet status $status"; failures=$((failures + 1)); }

# An instance that ends before starting MPI: Open MPI ends the job itself ("did not call
# init"); if it waited instead, the watchdog on MPI's start ends the waiting instance at the
# deadline. Either way: an error within seconds, never a hang.
run silent 3
expect "the job says why it ends" "on instance 1 of 2: MPI did not start within 3 s|did not call \"init\" before exiting"
[[ $took -lt 30 ]] || { echo "FAILED: silent end took $took s"; failures=$((failures + 1)); }
[[ $status -ne 0 ]] || { echo "FAILED: silent end: the job reported success"; failures=$((failures + 1)); }

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "PASSED: every instance failed within seconds naming both sides"
