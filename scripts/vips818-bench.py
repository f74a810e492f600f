#!/usr/bin/env python3
"""One warm libvips 8.18 lane for `blurfarm bench` (pyvips with pyvips-binary, in the venv that
scripts/setup.sh makes: .venv-bench/).

libvips runs in this process as its users run it (pyvips, sharp, imgproxy): started once, then
asked for work. The bench starts one process per lane and talks to it over standard input and
output, one JSON object a line each way. Every request has an "op"; every answer has "ok"
(true, or false with "error"). Times are measured here, around the work only:
"seconds" (wall) and "cpu" (this process's processor time, every thread).

ops:
  hello                                -> version "8.18.x", major, minor, micro, concurrency, pid
  concurrency  n                       -> sets vips_concurrency (threads per operation)
  blur   files, out, sigma|null, quality
         each file: decode, gaussblur(sigma, min_ampl=0.011) (the exact 3-sigma mask blurfarm
         uses), encode JPEG Q=quality into out/<stem>.jpg; sigma null only decodes and encodes
         (the codec floor)
  web    files, out, widths, backdrop_width, backdrop_sigma, quality
         each file: one shrink-on-load thumbnail to the largest width (fit inside that width),
         in sRGB (a file with an embedded ICC profile transformed from it, as blurfarm does),
         held in memory; every other width resized from it; the backdrop resized to its width
         and blurred; each encoded JPEG Q=quality
  scale  files, out, width, sigma, quality
         each file, `blurfarm bench scale`'s three variants: a thumbnail to the width (not
         enlarged) into out/thumb/<stem>.jpg, gaussblur(sigma, min_ampl=0.011) into
         out/blur/<stem>.jpg, the image as it is into out/webp/<stem>.webp; each Q=quality (the
         folders made by the caller)
  kernel file, bands, sigmas, runs     -> cpu: [median per sigma] of gaussblur(...).write_to_memory()
         on the file's pixels held in memory (bands 4: alpha 255 added)
  peak_reset / peak                    -> resets / reads this process's peak resident memory (bytes)
  generate_big  source, out, width, height   (the image replicated, cropped, JPEG Q=90)
  generate_web  sources, out, count, min_mp, max_mp   (photos enlarged to a spread of sizes, Q=90)
"""
import json
import os
import resource
import sys
import time

try:
    import pyvips
except ImportError as error:  # the lane cannot start: say why on the first line
    print(json.dumps({"ok": False, "error": f"{error} (run scripts/setup.sh: it makes .venv-bench with pyvips)"}),
          flush=True)
    sys.exit(2)

# The operation cache would answer a repeated gaussblur of the same image from memory.
pyvips.cache_set_max(0)
pyvips.cache_set_max_mem(0)
pyvips.cache_set_max_files(0)

MIN_AMPL = 0.011  # blurfarm's exact 3-sigma mask: the mask ends where libvips's would at this amplitude


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def timed(work):
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return {"seconds": time.perf_counter() - wall, "cpu": time.process_time() - cpu, **(result or {})}


def blur(request):
    sigma, quality, out = request.get("sigma"), request["quality"], request["out"]

    def work():
        for path in request["files"]:
            image = pyvips.Image.new_from_file(path, access="sequential")
            if sigma:
                image = image.gaussblur(sigma, min_ampl=MIN_AMPL)
            image.jpegsave(os.path.join(out, stem(path) + ".jpg"), Q=quality)
    return timed(work)


def web(request):
    widths = sorted(request["widths"], reverse=True)
    quality, out = request["quality"], request["out"]
    backdrop_width, backdrop_sigma = request["backdrop_width"], request["backdrop_sigma"]

    def work():
        for path in request["files"]:
            # A photo with an embedded ICC profile is brought to sRGB, as blurfarm's outputs are
            # (and sharp's by default): thumbnail's output_profile, after the shrink.
            profiled = pyvips.Image.new_from_file(path).get_typeof("icc-profile-data") != 0
            colour = {"output_profile": "srgb"} if profiled else {}
            # size="down": an image narrower than a width is not enlarged (blurfarm's default, upscale: false)
            largest = pyvips.Image.thumbnail(path, widths[0], height=10_000_000, size="down", **colour).copy_memory()
            name = stem(path)
            for width in widths:
                image = largest if width >= largest.width else largest.resize(width / largest.width)
                image.jpegsave(os.path.join(out, f"{name}-{width}.jpg"), Q=quality)
            shrunk = largest if backdrop_width >= largest.width else largest.resize(backdrop_width / largest.width)
            backdrop = shrunk.gaussblur(backdrop_sigma, min_ampl=MIN_AMPL)
            backdrop.jpegsave(os.path.join(out, f"{name}-backdrop.jpg"), Q=quality)
    return timed(work)


def scale(request):
    width, sigma, quality, out = request["width"], request["sigma"], request["quality"], request["out"]

    def work():
        for path in request["files"]:
            name = stem(path)
            # size="down": an image narrower than the width is not enlarged (blurfarm's default)
            thumbnail = pyvips.Image.thumbnail(path, width, height=10_000_000, size="down")
            thumbnail.jpegsave(os.path.join(out, "thumb", name + ".jpg"), Q=quality)
            image = pyvips.Image.new_from_file(path, access="sequential")
            image.gaussblur(sigma, min_ampl=MIN_AMPL).jpegsave(os.path.join(out, "blur", name + ".jpg"), Q=quality)
            image = pyvips.Image.new_from_file(path, access="sequential")
            image.webpsave(os.path.join(out, "webp", name + ".webp"), Q=quality)
    return timed(work)


def kernel(request):
    image = pyvips.Image.new_from_file(request["file"])
    if request["bands"] == 4:
        image = image.bandjoin_const([255])
    image = image.copy_memory()
    results = []
    for sigma in request["sigmas"]:
        times = []
        for _ in range(max(request["runs"], 1)):
            start = time.process_time()
            image.gaussblur(sigma, min_ampl=MIN_AMPL).write_to_memory()
            times.append(time.process_time() - start)
        results.append(sorted(times)[len(times) // 2])
    return {"cpu": results}


def peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return {"bytes": int(line.split()[1]) * 1024}
    return {"bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def peak_reset():
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # resets VmHWM to the current resident size
    return {}


def generate_big(request):
    source = pyvips.Image.new_from_file(request["source"])
    across = -(-request["width"] // source.width)
    down = -(-request["height"] // source.height)
    # Alternate mirrored copies so the seams are smooth: the encoder sees a photo, not tiles.
    row = pyvips.Image.arrayjoin([source if i % 2 == 0 else source.fliphor() for i in range(across)])
    flipped = row.flipver()
    image = pyvips.Image.arrayjoin([row if j % 2 == 0 else flipped for j in range(down)], across=1)
    image.crop(0, 0, request["width"], request["height"]).jpegsave(request["out"], Q=90)
    return {}


def generate_web(request):
    sources, count = request["sources"], request["count"]
    low, high = request["min_mp"], request["max_mp"]
    written = []
    for i in range(count):
        source = pyvips.Image.new_from_file(sources[i % len(sources)])
        megapixels = low + (high - low) * i / max(count - 1, 1)
        scale = (megapixels * 1e6 / (source.width * source.height)) ** 0.5
        path = os.path.join(request["out"], f"photo-{i:02d}-{stem(sources[i % len(sources)])}.jpg")
        source.resize(scale, kernel="lanczos3").jpegsave(path, Q=90)
        written.append(path)
    return {"files": written}


def answer(request):
    op = request.get("op")
    if op == "hello":
        return {"version": pyvips.version_string() if hasattr(pyvips, "version_string")
                else f"{pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}",
                "major": pyvips.version(0), "minor": pyvips.version(1), "micro": pyvips.version(2),
                "concurrency": pyvips.concurrency_get(), "pid": os.getpid()}
    if op == "concurrency":
        pyvips.concurrency_set(request["n"])
        return {"concurrency": pyvips.concurrency_get()}
    if op == "blur":
        return blur(request)
    if op == "web":
        return web(request)
    if op == "scale":
        return scale(request)
    if op == "kernel":
        return kernel(request)
    if op == "peak":
        return peak()
    if op == "peak_reset":
        return peak_reset()
    if op == "generate_big":
        return generate_big(request)
    if op == "generate_web":
        return generate_web(request)
    raise ValueError(f"unknown op {op!r}")


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = {"ok": True, **answer(json.loads(line))}
        except Exception as error:  # every failure is an answer: the lane stays up
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
