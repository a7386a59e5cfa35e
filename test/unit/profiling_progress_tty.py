#!/usr/bin/python3
# Copyright (c) Aspen contributors.
"""The compile progress bar: drawn on a terminal's stderr with the pass name and
the fraction done, erased when done; absent when the compile is short or stderr
is not a terminal.

usage: profiling_progress_tty.py PROGRAM   (a program that compiles a graph)
"""
import os
import pty
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def run_on_terminal(program, env):
    """Runs `program` with stdout and stderr on a pseudo-terminal; returns what it wrote."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(env["WORK"])
        os.execve(program, [program], env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def main():
    program = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as work:
        base = dict(os.environ, WORK=work)
        base.pop("ASPEN_PROGRESS", None)
        # A fresh compile cache each time, so that the graph is compiled.
        env = dict(base, ASPEN_CACHE_DIR=os.path.join(work, "cache1"), ASPEN_PROGRESS_DELAY_MS="0")
        status, out = run_on_terminal(program, env)
        check(status == 0, "the program runs on a terminal")
        check("compile [" in out, "a compile shows a bar on a terminal")
        for name in ("validate", "liveness", "emit"):
            check(("/7 %s" % name) in out, "the bar names the pass %s" % name)
        check("compile [####################] 7/7" in out, "the bar reaches 7/7 passes")
        last_bar = out.rfind("compile [")
        check(out.find("\r\x1b[K", last_bar) > last_bar, "the bar is erased when the compile is done")

        env = dict(base, ASPEN_CACHE_DIR=os.path.join(work, "cache2"))
        status, out = run_on_terminal(program, env)
        check(status == 0 and "compile [" not in out, "a compile shorter than a second shows no bar")

        env = dict(base, ASPEN_CACHE_DIR=os.path.join(work, "cache3"), ASPEN_PROGRESS_DELAY_MS="0")
        result = subprocess.run([program], cwd=work, env=env, capture_output=True, text=True)
        check(result.returncode == 0 and "compile [" not in result.stderr,
              "no bar when stderr is not a terminal")

        env = dict(base, ASPEN_CACHE_DIR=os.path.join(work, "cache4"), ASPEN_PROGRESS_DELAY_MS="0", ASPEN_PROGRESS="0")
        status, out = run_on_terminal(program, env)
        check(status == 0 and "compile [" not in out, "ASPEN_PROGRESS=0 turns the bar off")
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
