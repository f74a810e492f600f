#!/usr/bin/env python3
"""Load and speed figures of `blurfarm serve` (docs/performance.md, "The farm service").

    python3 scripts/serve-load.py .build/release/blurfarm [--jobs 200] [--photos 48] [--workers 2]

In a temporary folder: starts the server (port 0, its own state folder), then
1. a burst of --jobs small jobs (one 256 px image each) submitted by 8 client threads: all
   must complete; the server's resident memory after them against before (after one warm-up job);
2. the API's latency (GET /api/v1/jobs and /api/v1/jobs/ID, one request at a time, without
   pause) while the workers render a job of --photos corpus photos (1920x1080, gaussian sigma
   4 to PNG);
3. the same job (a copy) on the warm server, asked about twice a second, against `blurfarm
   run` of it (a fresh state folder, the same workers).
Prints the figures; exits 1 if a job of the burst did not complete.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("blurfarm")
parser.add_argument("--jobs", type=int, default=200)
parser.add_argument("--photos", type=int, default=48)
parser.add_argument("--workers", type=int, default=2)
arguments = parser.parse_args()
blurfarm = os.path.abspath(arguments.blurfarm)
repository = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
corpus = os.path.join(os.path.dirname(repository), "shared", "corpus", "photos")
if not os.path.isdir(corpus):
    corpus = "/work/shared/corpus/photos"

root = tempfile.mkdtemp(prefix="blurfarm-serve-load-")


def manifest(name, inputs, sigma):
    return (f"job: {name}\ninputs: [{inputs}]\noutputs:\n  - name: blur\n    path: out/{name}/{{stem}}.png\n"
            f"    filters:\n      - gaussian:\n          sigma: {sigma}\n")


def write(path, text):
    with open(path, "w") as file:
        file.write(text)


def rss(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return 0


# The files: a small image for each job of the burst, the photos of the big job twice.
small = os.path.join(root, "small.jpg")
subprocess.run(["vipsthumbnail", os.path.join(corpus, sorted(os.listdir(corpus))[0]), "-s", "256", "-o", small],
               check=True)
for index in range(arguments.jobs + 1):
    folder = os.path.join(root, "small", f"{index}")
    os.makedirs(folder)
    shutil.copy(small, os.path.join(folder, "in.jpg"))
    write(os.path.join(root, f"small-{index}.job"), manifest(f"small-{index}", f"small/{index}/*.jpg", 2))
photos = sorted(name for name in os.listdir(corpus) if name.endswith(".jpg"))
for place in ("busy", "served", "ran"):
    os.makedirs(os.path.join(root, place, "photos"))
    for index in range(arguments.photos):
        name = photos[index % len(photos)]
        shutil.copy(os.path.join(corpus, name), os.path.join(root, place, "photos", f"{index:03}-{name}"))
    write(os.path.join(root, place, "big.job"), manifest("big", "photos/*.jpg", 4))
    write(os.path.join(root, place, "farm.conf"), "state: state\n")
write(os.path.join(root, "farm.conf"), "state: state\n")

server = subprocess.Popen(
    [blurfarm, "serve", "--listen", "127.0.0.1:0", "--workers", str(arguments.workers), "--root", root,
     "--config", os.path.join(root, "farm.conf")], stdout=subprocess.PIPE, text=True)
port = int(server.stdout.readline().rsplit(":", 1)[1])
base = f"http://127.0.0.1:{port}"


def call(method, path, body=None):
    data = json.dumps(body or {}).encode() if method == "POST" else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.load(answer)


def submit(path):
    return call("POST", "/api/v1/jobs", {"path": path})["id"]


def finished(job_id):
    while True:
        job = call("GET", f"/api/v1/jobs/{job_id}")
        if job["state"] in ("completed", "failed", "cancelled"):
            return job
        time.sleep(0.05)


try:
    finished(submit(os.path.join(root, f"small-{arguments.jobs}.job")))
    time.sleep(1)
    before = rss(server.pid)

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(submit, [os.path.join(root, f"small-{i}.job") for i in range(arguments.jobs)]))
    submitted = time.monotonic() - started
    while call("GET", "/api/v1/jobs?state=queued,active,paused,cancelling&limit=1")["jobs"]:
        time.sleep(0.1)
    burst = time.monotonic() - started
    states = [job["state"] for job in call("GET", "/api/v1/jobs")["jobs"] if job["id"] in set(ids)]
    completed = states.count("completed")
    time.sleep(1)
    after = rss(server.pid)

    big = submit(os.path.join(root, "busy", "big.job"))
    latencies = []
    while True:
        for path in ("/api/v1/jobs", f"/api/v1/jobs/{big}"):
            asked = time.monotonic()
            job = call("GET", path)
            latencies.append((time.monotonic() - asked) * 1000)
        if job.get("state") in ("completed", "failed", "cancelled"):
            break

    started = time.monotonic()
    big = submit(os.path.join(root, "served", "big.job"))
    while (job := call("GET", f"/api/v1/jobs/{big}"))["state"] not in ("completed", "failed", "cancelled"):
        time.sleep(0.5)
    served = time.monotonic() - started
    if job["state"] != "completed":
        print(f"the big job ended {job['state']}")
        sys.exit(1)
finally:
    server.terminate()
    server.wait()

started = time.monotonic()
subprocess.run([blurfarm, "run", os.path.join(root, "ran", "big.job"), "--workers", str(arguments.workers),
                "--config", os.path.join(root, "ran", "farm.conf")], check=True)
ran = time.monotonic() - started
shutil.rmtree(root)

latencies.sort()
p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
print(f"burst: {completed}/{arguments.jobs} jobs completed; submitted in {submitted:.2f} s, all done in {burst:.1f} s")
print(f"server RSS: {before} MiB before the burst, {after} MiB after ({(after - before) / before * 100:+.0f} %)")
print(f"API latency while {arguments.photos} photos render: {len(latencies)} requests, "
      f"p50 {statistics.median(latencies):.1f} ms, p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms")
print(f"{arguments.photos}-photo job: served {served:.1f} s, run {ran:.1f} s (run / served {ran / served:.3f})")
sys.exit(0 if completed == arguments.jobs else 1)
