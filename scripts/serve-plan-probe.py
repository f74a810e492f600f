#!/usr/bin/env python3
"""Answers of `blurfarm serve` while it plans a million-output manifest (docs/performance.md,
"The service while a million-output manifest plans"; issue 47).

    python3 scripts/serve-plan-probe.py .build/release/blurfarm [--inputs 5000] [--variants 200]

In a temporary folder: --inputs empty `.jpg` files and a manifest of --variants variants over
them (inputs x variants outputs), a server (port 0, one worker, its own state folder), then the
manifest submitted by path while a probe calls, in turn and every 0.2 s, `GET /api/v1/jobs`,
`GET /metrics` and a one-output submission, each timed by curl (`time_total`), the
submission's own answer timed the same way. The samples taken while the server says a plan is
in progress (`blurfarm_plans_in_progress` above 0) are the figures: median, max, and how many
took over 100 ms. The large job is then cancelled --cancel-after seconds after its submission
was answered (it went to the farm with the plan its submission was checked with), and the
state it ends in and when are printed. Exits 1 when the server does not answer as expected.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("blurfarm")
parser.add_argument("--inputs", type=int, default=5000)
parser.add_argument("--variants", type=int, default=200)
parser.add_argument("--cancel-after", type=float, default=3, help="seconds after the submission is answered")
arguments = parser.parse_args()
blurfarm = os.path.abspath(arguments.blurfarm)

root = tempfile.mkdtemp(prefix="serve-plan-")
server = None
try:
    os.makedirs(f"{root}/photos")
    os.makedirs(f"{root}/small")
    for index in range(arguments.inputs):
        open(f"{root}/photos/{index:06d}.jpg", "wb").close()
    with open(f"{root}/big.job", "w") as manifest:
        manifest.write("job: big\ninputs: [photos/*.jpg]\noutputs:\n")
        for variant in range(arguments.variants):
            manifest.write(f"  - name: v{variant}\n    path: out/v{variant}/{{stem}}.png\n")
    subprocess.run(
        [sys.executable, "-c", "import zlib,struct,sys\n"
         "def chunk(t,d): return struct.pack('>I',len(d))+t+d+struct.pack('>I',zlib.crc32(t+d))\n"
         "raw=b''.join(b'\\x00'+b'\\x80\\x80\\x80'*8 for _ in range(8))\n"
         "open(sys.argv[1],'wb').write(b'\\x89PNG\\r\\n\\x1a\\n'+chunk(b'IHDR',struct.pack('>IIBBBBB',8,8,8,2,0,0,0))"
         "+chunk(b'IDAT',zlib.compress(raw))+chunk(b'IEND',b''))", f"{root}/small/a.png"], check=True)
    with open(f"{root}/serve.conf", "w") as configuration:
        configuration.write(f"state: {root}/state\n")
    server = subprocess.Popen(
        [blurfarm, "serve", "--listen", "127.0.0.1:0", "--root", root, "--workers", "1", "--config", f"{root}/serve.conf"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = None
    for line in server.stdout:
        found = re.search(r"127\.0\.0\.1:(\d+)", line)
        if found:
            port = int(found.group(1))
            break
    if port is None:
        sys.exit("the server did not say where it listens")
    threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
    base = f"http://127.0.0.1:{port}"

    def curl(method, path, body=None):
        """(seconds, status, body) of one call, as curl times it."""
        command = ["curl", "-s", "-o", "-", "-w", "\n%{http_code} %{time_total}", "-X", method, base + path]
        if body is not None:
            command += ["-H", "Content-Type: application/json", "-d", json.dumps(body)]
        output = subprocess.run(command, capture_output=True, text=True).stdout
        text, _, tail = output.rpartition("\n")
        status, seconds = tail.split()
        return float(seconds), int(status), text

    def planning():
        _, _, text = curl("GET", "/metrics")
        found = re.search(r"^blurfarm_plans_in_progress\S* (\d+)", text, re.M)
        return found is not None and int(found.group(1)) > 0

    samples = {"GET /api/v1/jobs": [], "GET /metrics": [], "a one-output submission": []}
    submitted = {}

    def submit_big():
        started = time.monotonic()
        seconds, status, text = curl("POST", "/api/v1/jobs", {"path": f"{root}/big.job"})
        submitted.update(seconds=seconds, status=status, text=text, answered=time.monotonic())

    submitter = threading.Thread(target=submit_big)
    submitter.start()
    small = "job: small-{n}\ninputs: [small/a.png]\noutputs:\n  - name: c\n    path: out-{n}/{{stem}}.png\n"
    count = 0
    while submitter.is_alive() or planning():
        if not planning():
            time.sleep(0.05)
            continue
        count += 1
        calls = [
            ("GET /api/v1/jobs", lambda: curl("GET", "/api/v1/jobs")),
            ("GET /metrics", lambda: curl("GET", "/metrics")),
            ("a one-output submission",
             lambda: curl("POST", "/api/v1/jobs", {"manifest": small.format(n=count), "folder": root})),
        ]
        for name, call in calls:
            seconds, status, _ = call()
            if status >= 400:
                sys.exit(f"{name}: status {status}")
            if planning():
                samples[name].append(seconds)
        time.sleep(0.2)
    submitter.join()
    if submitted.get("status") not in (201, 202):
        sys.exit(f"the large submission answered {submitted.get('status')}: {submitted.get('text', '')[:300]}")
    # The job in the farm (its up-to-date check, then its run), cancelled --cancel-after
    # seconds after the submission was answered.
    job = json.loads(submitted["text"]).get("id")
    time.sleep(max(0, arguments.cancel_after - (time.monotonic() - submitted["answered"])))
    cancelled = time.monotonic()
    curl("POST", f"/api/v1/jobs/{job}/cancel", {})
    state = None
    while time.monotonic() - cancelled < 120:
        _, _, text = curl("GET", f"/api/v1/jobs/{job}")
        state = json.loads(text).get("state")
        if state in ("cancelled", "failed", "completed"):
            submitted["ended"] = (state, time.monotonic() - cancelled)
            break
        time.sleep(0.02)
    print(f"{arguments.inputs} inputs x {arguments.variants} variants: the submission answered "
          f"{submitted.get('status')} after {submitted.get('seconds', 0):.1f} s")
    print(f"{'call while a plan ran':<26} {'samples':>7} {'median ms':>10} {'max ms':>8} {'over 100 ms':>12}")
    for name, times in samples.items():
        if times:
            print(f"{name:<26} {len(times):>7} {statistics.median(times) * 1000:>10.1f} "
                  f"{max(times) * 1000:>8.1f} {sum(t > 0.1 for t in times):>12}")
    if "ended" in submitted:
        state, seconds = submitted["ended"]
        print(f"cancelled {arguments.cancel_after:.0f} s after its submission was answered: '{state}' {seconds:.2f} s later")
    else:
        print(f"cancelled {arguments.cancel_after:.0f} s after its submission was answered: still '{state}' 120 s later")
finally:
    if server is not None:
        server.terminate()
        server.wait(timeout=60)
    shutil.rmtree(root, ignore_errors=True)
