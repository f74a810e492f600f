#!/usr/bin/env python3
"""Writes a region file beside each image given: {stem}.faces.json, the faces OpenCV 4's Haar
cascade finds, in the schema of docs/regions.schema.json, for a manifest's
`regions: {from: "{stem}.faces.json"}` (docs/recipes.md, "Blurring every face").

    .venv-faces/bin/python scripts/detect-faces.py photos/*.jpg

It needs opencv-python-headless 4.x (OpenCV 5 no longer ships the Haar cascades):
scripts/setup.sh makes .venv-faces with it. Images are read upright (OpenCV applies the EXIF
orientation), so the boxes are in the pixels of the image as displayed, as blurfarm places
them. Each file is written whole (a temporary file renamed over it). Exit status 0, or 1 when
an image could not be read (the others are done).
"""
import json
import os
import sys
import tempfile

import cv2


def main(paths):
    cascade = cv2.CascadeClassifier(os.path.join(cv2.data.haarcascades, "haarcascade_frontalface_default.xml"))
    if cascade.empty():
        sys.exit(f"detect-faces: OpenCV {cv2.__version__} has no Haar cascade: it needs opencv-python-headless<5")
    status = 0
    for path in paths:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        if image is None:
            print(f"detect-faces: {path}: cannot be read as an image", file=sys.stderr)
            status = 1
            continue
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        faces = cascade.detectMultiScale(grey, scaleFactor=1.1, minNeighbors=5, minSize=(24, 24))
        height, width = grey.shape
        boxes = [
            {"x": int(x), "y": int(y), "width": int(w), "height": int(h), "label": "face"}
            for (x, y, w, h) in faces
        ]
        out = os.path.splitext(path)[0] + ".faces.json"
        try:
            # A temporary file of its own beside it, renamed over it: never half written.
            with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(out) or ".", prefix=".faces-", delete=False) as f:
                json.dump({"width": width, "height": height, "boxes": boxes}, f)
            os.replace(f.name, out)
        except OSError as error:
            print(f"detect-faces: {out}: cannot write: {error.strerror}", file=sys.stderr)
            status = 1
            continue
        print(f"{out}: {len(boxes)} face{'' if len(boxes) == 1 else 's'}")
    return status


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: detect-faces.py IMAGE...")
    sys.exit(main(sys.argv[1:]))
