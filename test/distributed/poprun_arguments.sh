#!/usr/bin/env bash
# Issue 25, item 2: program arguments that mpirun would read as syntax (':' starts another
# application, a leading '-' an option) reach every instance unchanged, and nothing after them
# is run as a program. Each instance prints its arguments one per line between brackets.
#   poprun_arguments.sh <poprun>
set -u
poprun=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# If mpirun ran the words after ':' as a program, this one would leave a mark.
cat > "$dir/intruder" <<INTRUDER
#!/bin/sh
touch "$dir/intruder-ran"
INTRUDER
chmod +x "$dir/intruder"
out=$(timeout 120 "$poprun" --num-instances 2 --num-replicas 2 /bin/sh -c 's=; for a; do s="$s[$a]"; done; printf "%s\n" "$s"' \
  sh a : "$dir/intruder" -np 3 "" "x y" ':' 2>&1)
status=$?
echo "$out"
expected="[a][:][$dir/intruder][-np][3][][x y][:]"
count=$(grep -cF -- "$expected" <<<"$out")
if [[ $status -ne 0 ]]; then
  echo "FAILED: poprun exited with status $status"
  exit 1
fi
if [[ $count -ne 2 ]]; then
  echo "FAILED: $count of 2 instances saw their arguments as given ($expected)"
  exit 1
fi
if [[ -e $dir/intruder-ran ]]; then
  echo "FAILED: a word after ':' was run as a program"
  exit 1
fi
echo "PASSED: both instances got every argument as given"
