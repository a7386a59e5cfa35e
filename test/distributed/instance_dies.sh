#!/usr/bin/env bash
# One instance dies in the middle of a run; the others, waiting for it in a collective, must end
# with an error instead of hanging. Passes when the job ends non-zero within the time limit.
#   instance_dies.sh <mpirun> <program>
set -u
mpirun=$1 program=$2
start=$SECONDS
timeout 120 "$mpirun" --allow-run-as-root --oversubscribe -np 3 "$program"
status=$?
echo "job ended with status $status after $((SECONDS - start)) s"
if [[ $status -eq 124 ]]; then
  echo "FAILED: the surviving instances hung"
  exit 1
fi
if [[ $status -eq 0 ]]; then
  echo "FAILED: the job reported success although an instance died"
  exit 1
fi
echo "PASSED: the job ended with an error"
