#!/usr/bin/env python3
"""Load and speed figures of `blurfarm serve` (docs/performance-history.md, "The farm service").

    python3 scripts/serve-load.py .build/release/blurfarm [--jobs 200] [--photos 48] [--workers 2]

In a temporary folder: starts the server (port 0, its own state folder), then
1. a burst of --jobs small jobs (one 256 px image each) submitted by 8 client threads: all
   must complete; the server's resident memory after them against before (after one warm-up job);
2. the API's latency (GET /api/v1/jobs and /api/v1/jobs/ID, one request at a time, without
   pause) while the workers render a job of --photos corpus photos (1920x1080, gaussian sigma
   4 to PNG);
3. --pairs pairs of the same job (a fresh copy each time) through `blurfarm run` (a fresh state
   folder, the same workers) and through the warm server, run one after the other, the order
   alternating from pair to pair; the served job's time is from its submission until the
   event stream (GET /api/v1/events, opened before the submission) says it finished, and
   `run`'s until it exits. Beside the wall times, the CPU time of the process
   that decodes, hands out the tiles and writes (the server; `run` itself, without its workers),
   from /proc/PID/stat. With --speed-only, only this.
Prints the figures; exits 1 if a job did not complete.
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
import threading
import time
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("blurfarm")
parser.add_argument("--jobs", type=int, default=200)
parser.add_argument("--photos", type=int, default=48)
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--pairs", type=int, default=3)
parser.add_argument("--speed-only", action="store_true")
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
os.makedirs(os.path.join(root, "photos"))
for index in range(arguments.photos):
    name = photos[index % len(photos)]
    shutil.copy(os.path.join(corpus, name), os.path.join(root, "photos", f"{index:03}-{name}"))
places = ["busy"] + [f"{way}-{pair}" for pair in range(arguments.pairs) for way in ("served", "ran")]
for place in places:
    # The same photos (hard links): every copy of the job reads the same bytes.
    os.makedirs(os.path.join(root, place, "photos"))
    for name in os.listdir(os.path.join(root, "photos")):
        os.link(os.path.join(root, "photos", name), os.path.join(root, place, "photos", name))
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


def finished(job_id, every=0.05):
    while True:
        job = call("GET", f"/api/v1/jobs/{job_id}")
        if job["state"] in ("completed", "failed", "cancelled"):
            return job
        time.sleep(every)


def cpu(pid):
    """Seconds of CPU (user and system) process `pid` used so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def events():
    """The server's event stream, opened and connected (its `: connected` line read)."""
    stream = urllib.request.urlopen(base + "/api/v1/events", timeout=600)
    while stream.readline().strip() != b": connected":
        pass
    return stream


def ended(stream, job_id):
    """Reads `stream` until a `job` event says job `job_id` finished; the job."""
    kind = None
    for line in stream:
        line = line.decode().rstrip("\n")
        if line.startswith("event: "):
            kind = line[len("event: "):]
        elif line.startswith("data: ") and kind == "job":
            job = json.loads(line[len("data: "):])
            if job["id"] == job_id and job["state"] in ("completed", "failed", "cancelled"):
                return job
        elif not line:
            kind = None
    raise SystemExit("the event stream ended before the job")


def served(place):
    """The wall time and the server's CPU time of the job in `place` on the warm server."""
    stream = events()
    used = cpu(server.pid)
    started = time.monotonic()
    job = ended(stream, submit(os.path.join(root, place, "big.job")))
    elapsed = time.monotonic() - started
    stream.close()
    if job["state"] != "completed":
        raise SystemExit(f"the served job in {place} ended {job['state']}")
    return elapsed, cpu(server.pid) - used


def ran(place):
    """The wall time and the CPU time of `blurfarm run` (without its workers) of the job in
    `place`, until it exits; its CPU time is sampled every 50 ms while it runs."""
    started = time.monotonic()
    process = subprocess.Popen([blurfarm, "run", os.path.join(root, place, "big.job"), "--workers",
                                str(arguments.workers), "--config", os.path.join(root, place, "farm.conf")])
    used = [0.0]

    def sample():
        while process.returncode is None:
            try:
                used[0] = cpu(process.pid)
            except (OSError, IndexError):
                pass
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    process.wait()
    elapsed = time.monotonic() - started
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"run of {place} exited {process.returncode}")
    return elapsed, used[0]


try:
    # The warm-up job: the workers start.
    finished(submit(os.path.join(root, f"small-{arguments.jobs}.job")))
    time.sleep(1)
    if not arguments.speed_only:
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
        latencies.sort()
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        print(f"burst: {completed}/{arguments.jobs} jobs completed; submitted in {submitted:.2f} s, "
              f"all done in {burst:.1f} s")
        print(f"server RSS: {before} MiB before the burst, {after} MiB after ({(after - before) / before * 100:+.0f} %)")
        print(f"API latency while {arguments.photos} photos render: {len(latencies)} requests, "
              f"p50 {statistics.median(latencies):.1f} ms, p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms",
              flush=True)
        if completed != arguments.jobs:
            sys.exit(1)

    ratios, cpus = [], []
    for pair in range(arguments.pairs):
        # Alternating which goes first, so that a change of the machine's load between the two
        # does not always favour the same one.
        if pair % 2 == 0:
            run_time, run_cpu = ran(f"ran-{pair}")
            served_time, served_cpu = served(f"served-{pair}")
        else:
            served_time, served_cpu = served(f"served-{pair}")
            run_time, run_cpu = ran(f"ran-{pair}")
        ratios.append(run_time / served_time)
        cpus.append(run_cpu / served_cpu)
        print(f"pair {pair + 1}: {arguments.photos}-photo job run {run_time:.2f} s, served {served_time:.2f} s "
              f"(run / served {run_time / served_time:.3f}); CPU of run {run_cpu:.2f} s, of the server "
              f"{served_cpu:.2f} s (run / server {run_cpu / served_cpu:.3f})", flush=True)
finally:
    server.terminate()
    server.wait()
shutil.rmtree(root)
if ratios:
    print(f"run / served over {len(ratios)} pairs: min {min(ratios):.3f}, median {statistics.median(ratios):.3f}, "
          f"max {max(ratios):.3f}; CPU run / server: min {min(cpus):.3f}, median {statistics.median(cpus):.3f}, "
          f"max {max(cpus):.3f}")
