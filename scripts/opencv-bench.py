#!/usr/bin/env python3
"""Times OpenCV's 8-bit GaussianBlur, single-threaded, for `blurfarm bench`.

Reads raw interleaved 8-bit pixels (what the bench hands blurfarm's kernel), blurs them with
cv2.GaussianBlur at each sigma with the same mask reach as blurfarm (ksize = 2 * ceil(3 sigma)
+ 1) and the border matching blurfarm's edge rule (clamp: BORDER_REPLICATE, mirror:
BORDER_REFLECT_101, transparent: BORDER_CONSTANT with 0), and prints one JSON object:
{"version": "...", "seconds": [median seconds for each --sigma, in order]}. Each timing is the
processor time (time.process_time: other processes on a busy machine do not count) of one call,
8-bit in and 8-bit out, into an output array allocated once (as blurfarm's side of the bench
does). scripts/setup.sh installs opencv-python-headless.
"""
import argparse
import json
import math
import sys
import time

BORDERS = {"clamp": "BORDER_REPLICATE", "mirror": "BORDER_REFLECT_101", "transparent": "BORDER_CONSTANT"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--raw", required=True, help="file of width*height*bands bytes, rows top to bottom")
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--height", type=int, required=True)
    parser.add_argument("--bands", type=int, required=True, choices=(3, 4))
    parser.add_argument("--sigma", type=float, action="append", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--edge", default="clamp", choices=sorted(BORDERS))
    args = parser.parse_args()
    try:
        import cv2
        import numpy
    except ImportError as error:
        print(f"opencv-bench: {error} (scripts/setup.sh installs opencv-python-headless)", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    pixels = numpy.fromfile(args.raw, dtype=numpy.uint8)
    if pixels.size != args.width * args.height * args.bands:
        print(f"opencv-bench: {args.raw}: {pixels.size} bytes, expected {args.width * args.height * args.bands}",
              file=sys.stderr)
        return 2
    image = pixels.reshape(args.height, args.width, args.bands)
    border = getattr(cv2, BORDERS[args.edge])
    output = numpy.empty_like(image)
    seconds = []
    for sigma in args.sigma:
        size = 2 * math.ceil(3 * sigma) + 1
        times = []
        for _ in range(max(args.runs, 1)):
            start = time.process_time()
            cv2.GaussianBlur(image, (size, size), dst=output, sigmaX=sigma, sigmaY=sigma, borderType=border)
            times.append(time.process_time() - start)
        seconds.append(sorted(times)[len(times) // 2])
    print(json.dumps({"version": cv2.__version__, "seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
