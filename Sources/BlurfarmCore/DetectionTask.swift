// A detection task as data (docs/protocol.md, "detectionTask (11)"): one photo searched for a
// detector's boxes by one worker, as a whole-image task makes one photo's outputs there. The
// coordinator asks through its `ImageRendering` (a worker pool runs it), BlurfarmWire carries
// it, a worker runs it with BlurfarmDetection's `PhotoSearch`; the coordinator keeps the boxes
// in its cache and turns them into regions.

/// A box a detector found, in the pixels of the image it was given (or of the photo as
/// shown, once placed there), with its score in 0...1.
public struct DetectedBox: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public var score: Double

    public init(x: Double, y: Double, width: Double, height: Double, score: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.score = score
    }
}

/// Payload of the wire's `detectionTask`: one photo to search with a detector.
///
/// Layout: taskID u64, imageID u64, attempt u32, input (``TaskInput``), detector string, modelFolder string, identity string, threads u32,
/// schedule (wholeSide, smallestFace, detectorSmallest, tileSide, overlap, cutFace: u32 each,
/// a ``DetectionSchedule``'s fields in its initializer's order).
public struct DetectionTask: Equatable, Sendable {
    /// The coordinator's id of this task, unique within a run; the reply names it.
    public var taskID: UInt64
    /// The coordinator's id of the image.
    public var imageID: UInt64
    /// 1 for the first try, 2 for the first retry, and so on.
    public var attempt: UInt32
    /// The photo the worker decodes, at the sizes the schedule's passes need.
    public var input: TaskInput
    /// The detector plugin's name (the worker loads it from its plugin folders).
    public var detector: String
    /// Where the detector opens its model.
    public var modelFolder: String
    /// What the coordinator files the boxes under: the model's identity as its session names
    /// it, the detector library's content hash and the schedule's key. A worker whose detector
    /// says another (the model or the plugin replaced meanwhile) refuses the task, so that no
    /// box is cached under a detector that did not find it.
    public var identity: String
    /// The threads the detector's network may use.
    public var threads: Int
    /// How the photo is searched.
    public var schedule: DetectionSchedule

    /// A task; see the properties.
    public init(
        taskID: UInt64, imageID: UInt64, attempt: UInt32, input: TaskInput, detector: String, modelFolder: String,
        identity: String, threads: Int, schedule: DetectionSchedule
    ) {
        self.taskID = taskID
        self.imageID = imageID
        self.attempt = attempt
        self.input = input
        self.detector = detector
        self.modelFolder = modelFolder
        self.identity = identity
        self.threads = threads
        self.schedule = schedule
    }
}

/// Payload of the wire's `detectionResult`: a detection task done.
///
/// Layout: taskID u64, u8 tag, then 0 found: width u32, height u32 (the photo as shown), boxes
/// (list of x, y, width, height, score: f64 each, in the photo's pixels, best first); 1
/// failed: ``DetectionFailure``.
public struct DetectionResult: Equatable, Sendable {
    /// The task this answers.
    public var taskID: UInt64
    /// The boxes, or why there are none.
    public var outcome: Outcome

    /// What the search gave.
    public enum Outcome: Equatable, Sendable {
        /// The photo as shown is `width` × `height`; `boxes` are in its pixels, merged across
        /// the passes, best first.
        case found(width: Int, height: Int, boxes: [DetectedBox])
        /// The photo could not be decoded, or the detector failed.
        case failed(DetectionFailure)
    }

    /// A result; see the properties.
    public init(taskID: UInt64, outcome: Outcome) {
        self.taskID = taskID
        self.outcome = outcome
    }
}

/// Why a detection task found no boxes, kept typed for the report.
///
/// Layout: kind u8 (0 decode, 1 detector), code optional string, message string.
public struct DetectionFailure: Equatable, Sendable, Error {
    public enum Kind: UInt8, Sendable {
        /// The photo could not be read or decoded (the run would fail to decode it too).
        case decode = 0
        /// The detector failed, gave boxes no image has, or is not the model asked for.
        case detector = 1
    }

    public var kind: Kind
    /// ImageIO's error code (its name, e.g. `decodeFailed`) for a decode failure.
    public var code: String?
    /// What went wrong.
    public var message: String

    public init(kind: Kind, code: String?, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }
}
