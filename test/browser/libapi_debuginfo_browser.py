#!/usr/bin/python3
# Copyright (c) Aspen contributors.
"""Issue 15 item 6 in a real headless browser (Debian's chromium driven by
Selenium): the analyser page shows the op that made a compute set or a program
step, with its layer, api and arguments, as the report records them.

usage: libapi_debuginfo_browser.py ASPEN_VISION SAMPLE_PROGRAM WORK_DIR
SAMPLE_PROGRAM writes an auto-report into the directory it is given as its only
argument (samples/profiling_matmul: three poplin::matMul calls named ab, abb, abbT).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

FAILURES = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def make_driver(profile_dir):
    options = webdriver.ChromeOptions()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000", "--user-data-dir=" + profile_dir):
        options.add_argument(flag)
    for path in ("/usr/bin/chromium", "/usr/lib/chromium/chromium"):
        if os.path.exists(path):
            options.binary_location = path
            break
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def open_page(driver, path):
    driver.get("file://" + os.path.abspath(path))
    for _ in range(200):
        if driver.execute_script("return document.body.dataset.ready === 'true' || "
                                 "document.querySelector('.error-panel') !== null"):
            return
        time.sleep(0.05)


def show(driver, view):
    driver.find_element(By.CSS_SELECTOR, "nav button[data-view='%s']" % view).click()


def context_chain(report, ident):
    """The report's debug contexts from `ident` up to the root."""
    by_id = {d["id"]: d for d in report.get("debugContexts", [])}
    chain = []
    while ident in by_id and len(chain) < 64:
        chain.append(by_id[ident])
        ident = by_id[ident]["parent"]
    return chain


def main():
    tool, sample, work = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    report_dir = os.path.join(work, "report")
    run = subprocess.run([sample, report_dir], capture_output=True, text=True)
    check(run.returncode == 0, "the sample runs and writes its report (%s)" % run.stderr.strip()[-200:])
    report = json.load(open(os.path.join(report_dir, "profile.json")))
    page = os.path.join(work, "page.html")
    result = subprocess.run([tool, report_dir, "-o", page], capture_output=True, text=True)
    check(result.returncode == 0, "aspen-vision writes the page (%s)" % result.stderr.strip())

    # What the report says the first matMul's compute set was made under.
    css = report["computeSets"]
    target = next((i for i, c in enumerate(css) if c.get("debugId") and
                   any(d["values"].get("api") == "matMul" and d["path"] == "ab"
                       for d in context_chain(report, c["debugId"]))), None)
    check(target is not None, "the report links a compute set to poplin::matMul 'ab'")
    if target is None:
        return 1
    matmul = next(d for d in context_chain(report, css[target]["debugId"]) if d["values"].get("api") == "matMul")
    args = matmul["values"]["args"]
    check(args["A"]["shape"] == "[256, 256]" and args["B"]["shape"] == "[256, 256]",
          "the report records matMul's operands as passed: %s" % args)

    profile = tempfile.mkdtemp(prefix="aspen-chromium-")
    driver = make_driver(profile)
    try:
        open_page(driver, page)
        check(driver.find_elements(By.CSS_SELECTOR, ".error-panel") == [], "the page draws without an error panel")

        # Compute sets: selecting one shows the op that made it and its arguments.
        show(driver, "Compute sets")
        rows = [r for r in driver.find_elements(By.CSS_SELECTOR, "#cs-table tr") if r.find_elements(By.TAG_NAME, "td")]
        check(len(rows) == len(css), "the compute-set table lists every compute set (%d)" % len(css))
        # Sort-independent: find the row of the target compute set by its index column.
        row = None
        for r in rows:
            cells = [c.text for c in r.find_elements(By.TAG_NAME, "td")]
            if len(cells) > 1 and cells[1].replace(",", "") == str(target):
                row = r
        check(row is not None, "the table has a row for compute set %d" % target)
        if row is not None:
            row.click()
            panel = driver.find_element(By.ID, "cs-debug")
            text = panel.text
            check("[poplin] matMul" in text, "selecting the compute set names its op '[poplin] matMul' (%r)" % text[:120])
            shown = [json.loads(p.text) for p in panel.find_elements(By.CSS_SELECTOR, "pre.debug-args")]
            check(args in shown, "the op's arguments shown are the report's (%s)" % shown[:2])
            check(any("A" in a and a["A"].get("type") == "float" for a in shown),
                  "the arguments include operand A with its type")

        # Execution trace: selecting a program step made by the op shows the same.
        show(driver, "Execution trace")
        trace = report["execution"]["trace"]
        steps = report["steps"]
        index = next((i for i, e in enumerate(trace) if steps[e[0]].get("computeSet") == target), None)
        check(index is not None, "compute set %d ran" % target)
        if index is not None:
            chart = driver.find_element(By.ID, "trace-chart")
            driver.execute_script("""const c = arguments[0], r = c.getBoundingClientRect();
                const x = r.left + (arguments[1] + 0.5) / arguments[2] * r.width;
                c.dispatchEvent(new MouseEvent('click', {clientX: x, clientY: r.top + r.height - 2, bubbles: true}));""",
                                  chart, index, len(trace))
            details = driver.find_element(By.ID, "step-details").text
            check(details.startswith("Step %d " % trace[index][0]), "the trace shows step %d (%r)" % (trace[index][0], details[:60]))
            debug = driver.find_element(By.ID, "step-debug")
            check("[poplin] matMul" in debug.text, "the step's debug information names '[poplin] matMul'")
            shown = [json.loads(p.text) for p in debug.find_elements(By.CSS_SELECTOR, "pre.debug-args")]
            check(args in shown, "the step shows the op's arguments")
        # Programs: selecting a step of the program tree shows the same.
        show(driver, "Programs")
        driver.find_element(By.CSS_SELECTOR, "#program-tree > details > summary").click()
        if index is not None:
            leaves = []
            for _ in range(100):  # the tree fills a node when it opens (the toggle event)
                leaves = driver.find_elements(By.CSS_SELECTOR, "#program-tree .leaf[data-step='%d']" % trace[index][0])
                if leaves:
                    break
                time.sleep(0.05)
            check(len(leaves) >= 1, "the program tree lists step %d" % trace[index][0])
            if leaves:
                leaves[0].click()
                debug = driver.find_element(By.ID, "program-debug")
                check("[poplin] matMul" in debug.text, "selecting the step in the program tree names '[poplin] matMul'")
                shown = [json.loads(p.text) for p in debug.find_elements(By.CSS_SELECTOR, "pre.debug-args")]
                check(args in shown, "the program tree shows the op's arguments")
        severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        check(severe == [], "no errors in the browser console: %s" % severe[:3])
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
