import BlurfarmCore

// The detection messages (protocol version 10): their payloads, written and read side by side,
// in the order each type's doc comment gives (the types are BlurfarmCore's: the coordinator
// asks for a photo's boxes through its rendering, and never knows the wire).

extension DetectionTask {
    func write(to w: inout ByteWriter) {
        w.integer(taskID)
        w.integer(imageID)
        w.integer(attempt)
        input.write(to: &w)
        w.string(detector)
        w.string(modelFolder)
        w.string(identity)
        w.integer(UInt32(threads))
        let s = schedule
        for value in [s.wholeSide, s.smallestFace, s.detectorSmallest, s.tileSide, s.overlap, s.cutFace] {
            w.integer(UInt32(value))
        }
    }

    init(from r: inout ByteReader) throws(PayloadProblem) {
        let taskID = try r.integer(UInt64.self, "taskID")
        let imageID = try r.integer(UInt64.self, "imageID")
        let attempt = try r.integer(UInt32.self, "attempt")
        let input = try TaskInput(from: &r)
        let detector = try r.string("detector")
        let modelFolder = try r.string("modelFolder")
        let identity = try r.string("identity")
        let threads = Int(try r.integer(UInt32.self, "threads"))
        guard threads >= 1 else { throw .invalidValue(field: "threads", reason: "a search takes at least one thread") }
        var values: [Int] = []
        for name in ["wholeSide", "smallestFace", "detectorSmallest", "tileSide", "overlap", "cutFace"] {
            values.append(Int(try r.integer(UInt32.self, "schedule." + name)))
        }
        let (whole, smallest, detectorSmallest, tile, overlap, cut) = (values[0], values[1], values[2], values[3], values[4], values[5])
        guard DetectionSchedule.holds(
            wholeSide: whole, smallestFace: smallest, detectorSmallest: detectorSmallest, tileSide: tile, overlap: overlap,
            cutFace: cut)
        else {
            throw .invalidValue(
                field: "schedule", reason: "\(values) is no schedule (tiles longer than their overlap, cut faces within it)")
        }
        self.init(
            taskID: taskID, imageID: imageID, attempt: attempt, input: input, detector: detector, modelFolder: modelFolder,
            identity: identity, threads: threads,
            schedule: DetectionSchedule(
                wholeSide: whole, smallestFace: smallest, detectorSmallest: detectorSmallest, tileSide: tile, overlap: overlap,
                cutFace: cut))
    }
}

extension DetectionResult {
    func write(to w: inout ByteWriter) {
        w.integer(taskID)
        switch outcome {
        case .found(let width, let height, let boxes):
            w.u8(0)
            w.integer(UInt32(width))
            w.integer(UInt32(height))
            w.count(boxes.count)
            for box in boxes {
                for value in [box.x, box.y, box.width, box.height, box.score] { w.f64(value) }
            }
        case .failed(let failure):
            w.u8(1)
            w.u8(failure.kind.rawValue)
            w.optional(failure.code) { $0.string($1) }
            w.string(failure.message)
        }
    }

    init(from r: inout ByteReader) throws(PayloadProblem) {
        let taskID = try r.integer(UInt64.self, "taskID")
        switch try r.u8("outcome") {
        case 0:
            let width = Int(try r.integer(UInt32.self, "width"))
            let height = Int(try r.integer(UInt32.self, "height"))
            guard width > 0, height > 0 else { throw .invalidValue(field: "width", reason: "a photo of \(width) x \(height)") }
            var boxes: [DetectedBox] = []
            for i in 0..<(try r.count("boxes")) {
                let field = "boxes[\(i)]"
                let box = DetectedBox(
                    x: try r.f64(field + ".x"), y: try r.f64(field + ".y"), width: try r.f64(field + ".width"),
                    height: try r.f64(field + ".height"), score: try r.f64(field + ".score"))
                // A box that places nothing, or a score out of range: no detector gives it.
                guard [box.x, box.y, box.width, box.height].allSatisfy(\.isFinite), box.width > 0, box.height > 0,
                    (0...1).contains(box.score)
                else {
                    throw .invalidValue(field: field, reason: "\(box) is no box a detector finds")
                }
                boxes.append(box)
            }
            self.init(taskID: taskID, outcome: .found(width: width, height: height, boxes: boxes))
        case 1:
            let tag = try r.u8("failure.kind")
            guard let kind = DetectionFailure.Kind(rawValue: tag) else { throw .badTag(field: "failure.kind", tag: tag) }
            let code = try r.optional("failure.code") { (r) throws(PayloadProblem) in try r.string("failure.code") }
            self.init(
                taskID: taskID, outcome: .failed(DetectionFailure(kind: kind, code: code, message: try r.string("failure.message"))))
        case let tag:
            throw .badTag(field: "outcome", tag: tag)
        }
    }
}
