#!/usr/bin/python3
# Copyright (c) Aspen contributors.
"""The analyser page in a real headless browser (Debian's chromium driven by
Selenium): what a user sees on a real report, the error panel for a report the
page cannot draw, compare mode, and the size and first paint of a page for a
1,472-tile, 10,000-step report.

usage: profiling_vision_browser.py ASPEN_VISION SAMPLE_PROGRAM WORK_DIR
SAMPLE_PROGRAM is a program that writes an auto-report into the directory it is
given as its only argument (samples/profiling_matmul).
"""
import json
import os
import re
import random
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
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000", "--user-data-dir=" + profile_dir):
        options.add_argument(flag)
    for path in ("/usr/bin/chromium", "/usr/lib/chromium/chromium"):
        if os.path.exists(path):
            options.binary_location = path
            break
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def open_page(driver, path):
    start = time.perf_counter()
    driver.get("file://" + os.path.abspath(path))
    for _ in range(200):
        if driver.execute_script("return document.body.dataset.ready === 'true' || "
                                 "document.querySelector('.error-panel') !== null"):
            break
        time.sleep(0.05)
    return time.perf_counter() - start


def show(driver, view):
    driver.find_element(By.CSS_SELECTOR, "nav button[data-view='%s']" % view).click()


def vision(tool, inputs, output):
    result = subprocess.run([tool] + inputs + ["-o", output], capture_output=True, text=True)
    check(result.returncode == 0, "aspen-vision %s exits 0 (%s)" % (" ".join(inputs), result.stderr.strip()))
    return output


def real_report_checks(driver, tool, report_dir, work):
    report = json.load(open(os.path.join(report_dir, "profile.json")))
    num_tiles = report["target"]["numTiles"]
    page = vision(tool, [report_dir], os.path.join(work, "real.html"))
    open_page(driver, page)
    check(driver.find_elements(By.CSS_SELECTOR, ".error-panel") == [], "a real report draws without an error panel")

    show(driver, "Memory")
    cells = driver.find_elements(By.CSS_SELECTOR, "#heatmap .tile")
    check(len(cells) == num_tiles, "the heatmap has one cell per tile (%d cells, %d tiles)" % (len(cells), num_tiles))

    # The hottest tile and its largest variable, worked out here from the report itself.
    peak = report["memory"]["tiles"]["peakBytes"]
    hot = max(range(num_tiles), key=lambda t: peak[t])
    on_tile = []
    for v in report["variables"]:
        t = v["tiles"]
        for k in range(0, len(t), 2):
            if t[k] == hot:
                on_tile.append((t[k + 1], v["name"]))
    largest = max(on_tile)[1] if on_tile else None
    driver.find_element(By.CSS_SELECTOR, "#heatmap .tile[data-tile='%d']" % hot).click()
    title = driver.find_element(By.ID, "tile-title").text
    names = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#tile-details .var-name")]
    check(title == "Tile %d" % hot, "clicking the hottest tile (%d) shows its details (%r)" % (hot, title))
    check(largest is not None and largest in names,
          "the hottest tile lists its largest variable %r by name (listed: %s)" % (largest, names[:6]))

    show(driver, "Execution trace")
    trace = report["execution"]["trace"]
    text = driver.find_element(By.ID, "trace-count").text
    check(text.startswith("{:,} steps executed".format(len(trace))),
          "the trace shows the program's step count (%d): %r" % (len(trace), text))
    # Clicking the first bar shows that step's split and per-tile view.
    chart = driver.find_element(By.ID, "trace-chart")
    driver.execute_script("""const c = arguments[0], r = c.getBoundingClientRect();
        c.dispatchEvent(new MouseEvent('click', {clientX: r.left + 1, clientY: r.top + r.height - 2, bubbles: true}));""", chart)
    details = driver.find_element(By.ID, "step-details").text
    first = trace[0][0]
    check(details.startswith("Step %d " % first), "clicking the first trace bar shows step %d (%r)" % (first, details[:60]))
    check("compute " in details and "exchange " in details and "sync " in details,
          "the step details split its cycles into compute, exchange and sync")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#step-tiles .tile")) == num_tiles, "the per-tile view of the step has a cell per tile")

    # The host timeline from the pvti trace beside the report, drawn beside the device trace.
    check(len(driver.find_elements(By.ID, "host-trace")) == 1, "the trace view draws the host timeline")
    host = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#host-events tr td:first-child")]
    check("Engine::run(0)" in host and "validate" in host,
          "the host timeline lists Aspen's trace points (run, compile passes): %s" % host[:8])

    for view in ("Liveness", "Programs", "Vertex types", "Variables", "Streaming Memory", "Summary"):
        show(driver, view)
        check(driver.find_elements(By.CSS_SELECTOR, ".error-panel") == [], "the %s view draws" % view)
        lines = driver.execute_script("return document.getElementById('view').innerText.split('\\n')")
        check("null" not in lines and "undefined" not in lines, "the %s view shows no null or undefined" % view)
    show(driver, "Variables")
    search = driver.find_element(By.CSS_SELECTOR, "#variable-table input[type=search]")
    search.send_keys(largest or "")
    rows = driver.find_elements(By.CSS_SELECTOR, "#variable-table tr td:first-child")
    check(any(r.text == largest for r in rows), "searching the variable table finds %r" % largest)
    errors = console_errors(driver)
    check(errors == [], "no console errors (%s)" % errors)
    return page


def bad_report_checks(driver, tool, report_dir, work):
    report = json.load(open(os.path.join(report_dir, "profile.json")))
    report["memory"]["tiles"]["peakBytes"] = report["memory"]["tiles"]["peakBytes"][:5]
    bad_dir = os.path.join(work, "bad")
    os.makedirs(bad_dir, exist_ok=True)
    json.dump(report, open(os.path.join(bad_dir, "profile.json"), "w"))
    page = vision(tool, [bad_dir], os.path.join(work, "bad.html"))
    open_page(driver, page)
    panels = driver.find_elements(By.CSS_SELECTOR, ".error-panel")
    check(len(panels) == 1 and "peakBytes" in panels[0].text and "profile.json" in panels[0].text,
          "a report the page cannot draw shows an error panel naming the file and key (%r)"
          % (panels[0].text if panels else None))
    driver.get_log("browser")


def oom_checks(driver, tool, report_dir, work):
    # The report of a graph compiled with debug.allowOutOfMemory: the hottest tile over its memory.
    report = json.load(open(os.path.join(report_dir, "profile.json")))
    peak = report["memory"]["tiles"]["peakBytes"]
    limit = report["target"]["bytesPerTile"]
    hot = max(range(len(peak)), key=lambda t: peak[t])
    peak[hot] = limit + 1000
    report["memory"].update({"outOfMemory": True, "tilesOutOfMemory": 1,
                             "outOfMemoryMessage": "Out of memory on tile %d" % hot})
    oom_dir = os.path.join(work, "oom")
    os.makedirs(oom_dir, exist_ok=True)
    json.dump(report, open(os.path.join(oom_dir, "profile.json"), "w"))
    on_tile = sorted(((t[k + 1], v["name"]) for v in report["variables"] for t in [v["tiles"]]
                      for k in range(0, len(t), 2) if t[k] == hot), reverse=True)
    page = vision(tool, [oom_dir], os.path.join(work, "oom.html"))
    open_page(driver, page)
    panel = driver.find_elements(By.ID, "oom")
    text = panel[0].text if panel else ""
    check("Worst tile: %d" % hot in text and "(1,000 over)" in text,
          "the out-of-memory panel names the failing tile and the excess (%r)" % text[:120])
    check(on_tile and (on_tile[0][1] + " (") in text and "\u2190 move" in text,
          "the out-of-memory panel lists what to move, largest first (%s)" % (on_tile[:1],))
    driver.get_log("browser")


def compare_checks(driver, tool, a_dir, work):
    # B: the same program's report with the first variable's bytes changed, as a second run would give.
    report = json.load(open(os.path.join(a_dir, "profile.json")))
    b_dir = os.path.join(work, "b")
    os.makedirs(b_dir, exist_ok=True)
    report["memory"]["maxTilePeakBytes"] += 4096
    report["memory"]["tiles"]["peakBytes"][0] += 4096
    json.dump(report, open(os.path.join(b_dir, "profile.json"), "w"))
    page = vision(tool, [a_dir, b_dir], os.path.join(work, "compare.html"))
    open_page(driver, page)
    diffs = [r.find_element(By.TAG_NAME, "th").text for r in driver.find_elements(By.CSS_SELECTOR, "#summary-table tr.diff")]
    check(diffs == ["Largest tile (bytes)"], "compare mode highlights exactly the differing row (%s)" % diffs)
    show(driver, "Memory")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#heatmap .tile")) == len(driver.find_elements(By.CSS_SELECTOR, "#heatmap-b .tile")),
          "compare mode draws both heatmaps")
    changed = driver.find_elements(By.CSS_SELECTOR, "#heatmap .tile.changed")
    check([c.get_attribute("data-tile") for c in changed] == ["0"], "compare mode marks the one tile that differs")
    errors = console_errors(driver)
    check(errors == [], "no console errors in compare mode (%s)" % errors)


def synthetic_report(num_tiles, num_steps):
    """A report of the shape the engine writes, at the size of a large model."""
    rng = random.Random(7)
    bytes_per_tile = 638976
    variables = []
    for i in range(6000):
        first = rng.randrange(num_tiles)
        tiles = []
        for k in range(rng.choice((1, 2, 4, 8))):
            tiles += [(first + k) % num_tiles, rng.randrange(64, 4096)]
        always = i % 3 == 0
        v = {"name": "layer%d/var%d" % (i // 50, i), "type": "float", "shape": [tiles[1] // 4], "bytes": sum(tiles[1::2]),
             "constant": False, "alwaysLive": always, "tiles": tiles}
        if not always:
            a = rng.randrange(num_steps)
            v["liveFrom"], v["liveTo"] = a, min(num_steps - 1, a + rng.randrange(1, 400))
        variables.append(v)
    kinds = ["Execute", "Copy", "Execute", "Sync"]
    steps = [{"kind": kinds[s % 4], "name": "step%d" % s, "cycles": 100 + s % 977, "notAlwaysLiveBytes": (s * 7919) % 500000}
             for s in range(num_steps)]
    for s, st in enumerate(steps):
        if st["kind"] == "Execute":
            st["computeSet"] = (s // 2) % 200
    exec_steps, trace, start = [], [], 0
    for s, st in enumerate(steps):
        entry = {"step": s, "kind": st["kind"], "name": st["name"], "executions": 1, "cycles": st["cycles"]}
        if st["kind"] == "Execute":
            tiles = sorted(rng.sample(range(num_tiles), 48))
            entry["tiles"], entry["tileComputeCycles"] = tiles, [rng.randrange(50, 900) for _ in tiles]
            if s % 8 == 0:  # steps with counted vertices: their per-tile cycles as the run counted them
                entry["tileComputeCyclesCounted"], entry["executions"] = True, 3
        exec_steps.append(entry)
        trace.append([s, 0, start, st["cycles"]])
        start += st["cycles"]
    per_tile = lambda lo, hi: [rng.randrange(lo, hi) for _ in range(num_tiles)]
    return {
        "format": "aspen-profile", "version": 2,
        "target": {"type": "IPU_MODEL", "arch": "ipu2", "numIPUs": 1, "tilesPerIPU": num_tiles, "numTiles": num_tiles,
                   "bytesPerTile": bytes_per_tile, "numWorkerContexts": 6, "tileClockFrequency": 1.33e9, "replicationFactor": 1},
        "graph": {"numVertices": 500000, "numEdges": 2000000, "numVariables": len(variables), "numComputeSets": 200,
                  "numExecutedComputeSets": 200, "numVertexTypes": 30, "numPrograms": 1, "numSteps": num_steps},
        "memory": {"perTileOverheadBytes": 3168, "totalPeakBytes": 0, "maxTilePeakBytes": 0, "byCategory": {},
                   "tiles": {"peakBytes": per_tile(100000, 600000), "alwaysLiveBytes": per_tile(10000, 90000),
                             "notAlwaysLivePeakBytes": per_tile(10000, 90000), "notAlwaysLivePeakStep": per_tile(0, num_steps),
                             "byCategory": {"variables": per_tile(0, 300000), "vertexInstances": per_tile(0, 50000)}},
                   "outOfMemory": False, "tilesOutOfMemory": 0, "outOfMemoryMessage": ""},
        "steps": steps, "programs": [{"entry": 0}],
        "liveness": {"numAlwaysLiveVariables": 2000, "numNotAlwaysLiveVariables": 4000, "numBasicBlocks": 1},
        "computeSets": [{"name": "cs%d" % c, "vertices": 2500, "tiles": num_tiles, "computeCycles": 300, "totalVertexCycles": 10**6,
                         "exchangeInBytes": 4096, "exchangeInCycles": 40, "exchangeOutBytes": 0, "exchangeOutCycles": 0} for c in range(200)],
        "vertexTypes": [{"name": "popops::Vertex%d<float>" % t, "instances": 16000, "cyclesPerExecution": 10**5,
                         "tiles": [x for tile in range(0, num_tiles, 3) for x in (tile, 11)]} for t in range(30)],
        "variables": variables,
        "execution": {"runs": 1, "runsPerProgram": [1], "totalCycles": start,
                      "cycles": {"compute": start // 2, "exchange": start // 4, "hostExchange": 0, "sync": start - start // 2 - start // 4, "control": 0},
                      "hostSeconds": 1.0, "hostComputeSeconds": 0.8, "steps": exec_steps,
                      # A custom vertex type counted from its code, one whose code could not count.
                      "vertexTypes": [{"name": "popops::Vertex0<float>", "instancesExecuted": 16000, "cycles": 123456789,
                                       "instancesCounted": 16000, "instancesNotCounted": 0},
                                      {"name": "popops::Vertex1<float>", "instancesExecuted": 16000, "cycles": 368000,
                                       "instancesCounted": 0, "instancesNotCounted": 16000}], "trace": trace, "traceDropped": 0},
    }


def large_report_checks(driver, tool, work):
    big_dir = os.path.join(work, "big")
    os.makedirs(big_dir, exist_ok=True)
    json.dump(synthetic_report(1472, 10000), open(os.path.join(big_dir, "profile.json"), "w"))
    page = vision(tool, [big_dir], os.path.join(work, "big.html"))
    size = os.path.getsize(page)
    seconds = open_page(driver, page)
    paint = driver.execute_script(
        "const p = performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint');"
        "return p ? p.startTime : null;")
    print("MEASURE html size for 1,472 tiles x 10,000 steps: %.2f MB (target < 10 MB)" % (size / 1e6))
    print("MEASURE first contentful paint: %s ms; page ready (load + summary drawn) %.0f ms (target < 2000 ms)"
          % ("%.0f" % paint if paint is not None else "n/a", seconds * 1000))
    check(size < 10 * 1000 * 1000, "the page for 1,472 tiles and 10k steps is under 10 MB")
    check(paint is not None and paint < 2000, "first paint under 2 s")
    show(driver, "Memory")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#heatmap .tile")) == 1472, "the large heatmap has 1,472 cells")
    show(driver, "Execution trace")
    check(driver.find_element(By.ID, "trace-count").text.startswith("10,000 steps executed"), "the large trace shows 10,000 steps")
    # Clicking bars until one of a counted step: its per-tile view says the cycles were counted.
    chart = driver.find_element(By.ID, "trace-chart")
    counted = uncounted = None
    for x in range(1, 400, 2):
        driver.execute_script("""const c = arguments[0], r = c.getBoundingClientRect();
            c.dispatchEvent(new MouseEvent('click', {clientX: r.left + arguments[1], clientY: r.top + r.height - 2,
                                                     bubbles: true}));""", chart, x)
        details = driver.find_element(By.ID, "step-details").text
        m = re.match(r"Step (\d+) \(Execute", details)
        if m and int(m.group(1)) % 8 == 0:
            counted = details
        elif m:
            uncounted = details
        if counted and uncounted:
            break
    check(counted is not None and "counted from the vertices' code, mean of 3 executions" in counted,
          "a step with counted vertices says its per-tile cycles were counted (%r)" % (counted or "")[:200])
    check(uncounted is not None and "counted" not in uncounted,
          "a step without says nothing of counting (%r)" % (uncounted or "")[:200])
    # The vertex types view: a counted type's executed cycles are its counted cycles, and it says so.
    show(driver, "Vertex types")
    rows = {r.find_element(By.CSS_SELECTOR, "td").text: r.text
            for r in driver.find_elements(By.CSS_SELECTOR, "#vertex-table tr") if r.find_elements(By.CSS_SELECTOR, "td")}
    v0, v1 = rows.get("popops::Vertex0<float>", ""), rows.get("popops::Vertex1<float>", "")
    check("123,456,789" in v0 and v0.rstrip().endswith("counted") and "NOT" not in v0,
          "a counted vertex type shows its counted cycles and 'counted' (%r)" % v0)
    check("368,000" in v1 and "NOT counted (default)" in v1,
          "a vertex type whose code could not count says so (%r)" % v1)
    errors = console_errors(driver)
    check(errors == [], "no console errors on the large page (%s)" % errors)


def main():
    tool, sample, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    report_dir = os.path.join(work, "a")
    env = dict(os.environ)
    env.pop("POPLAR_ENGINE_OPTIONS", None)
    env["PVTI_OPTIONS"] = json.dumps({"enable": "true", "directory": report_dir})
    subprocess.run([sample, report_dir], check=True, stdout=subprocess.DEVNULL, env=env)
    browser_profile = tempfile.mkdtemp(prefix="aspen-chromium-")
    driver = make_driver(browser_profile)
    try:
        real_report_checks(driver, tool, report_dir, work)
        bad_report_checks(driver, tool, report_dir, work)
        oom_checks(driver, tool, report_dir, work)
        compare_checks(driver, tool, report_dir, work)
        large_report_checks(driver, tool, work)
    finally:
        driver.quit()
        shutil.rmtree(browser_profile, ignore_errors=True)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
