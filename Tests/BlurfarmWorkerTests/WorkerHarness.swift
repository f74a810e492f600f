import BlurfarmCore
import BlurfarmKernels
import BlurfarmTestSupport
import BlurfarmWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads frames from a file descriptor with a deadline.
struct FrameReader {
    let fd: Int32
    var decoder = FrameDecoder()

    init(fd: Int32) { self.fd = fd }

    /// The next message, or nil at the end of the stream; throws after `timeout` seconds.
    mutating func next(timeout: Double = 20) throws -> WireMessage? {
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            if let message = try decoder.nextMessage() { return message }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw HarnessError("no frame within \(timeout) s") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 1) * 1000))
            if ready <= 0 { continue }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return nil }
            if n < 0 { if errno == EINTR { continue } else { throw HarnessError("read: errno \(errno)") } }
            decoder.append(chunk[0..<n])
        }
    }

    /// The next message that is not a heartbeat.
    mutating func nextSkippingHeartbeats(timeout: Double = 60) throws -> WireMessage? {
        while true {
            let message = try next(timeout: timeout)
            if case .heartbeat = message { continue }
            return message
        }
    }
}

/// A `blurfarm-worker` process started from the built executable, with pipes on its stdin,
/// stdout and stderr; this test process is its coordinator.
final class WorkerProcessHandle {
    let process = Process()
    private let input = Pipe(), output = Pipe(), errors = Pipe()
    var reader: FrameReader

    init(workerID: UInt32, coordinatorPID: Int32 = getpid()) throws {
        process.executableURL = BuiltExecutable.worker
        process.arguments = ["--worker-id", "\(workerID)", "--coordinator-pid", "\(coordinatorPID)"]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        reader = FrameReader(fd: output.fileHandleForReading.fileDescriptor)
        try process.run()
    }

    func send(_ message: WireMessage) throws {
        try input.fileHandleForWriting.write(contentsOf: FrameEncoder.encode(message))
    }

    /// Does `body` (sends that must fit in the pipe's buffer) with the worker stopped
    /// (SIGSTOP), then lets it go on: what was sent arrives at once.
    func whileStopped(_ body: () throws -> Void) throws {
        kill(process.processIdentifier, SIGSTOP)
        defer { kill(process.processIdentifier, SIGCONT) }
        try body()
    }

    func sendBytes(_ bytes: [UInt8]) throws {
        try input.fileHandleForWriting.write(contentsOf: Data(bytes))
    }

    func closeInput() throws {
        try input.fileHandleForWriting.close()
    }

    /// Reads the worker's hello and first ready.
    func handshake() throws -> Hello {
        guard case .hello(let hello) = try reader.next() else { throw HarnessError("no hello first") }
        guard case .ready = try reader.next() else { throw HarnessError("no ready after hello") }
        return hello
    }

    /// Waits for the exit (`eventually`, at most `timeout` seconds: the worker is then
    /// terminated); returns the status and the stderr text.
    func waitForExit(
        timeout: Int = 20, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> (status: Int32, stderr: String) {
        defer { if process.isRunning { process.terminate() } }
        try eventually("the worker's exit", timeout: .seconds(timeout), sourceLocation: sourceLocation) { !process.isRunning }
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, text)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

enum Pixels {
    /// Fills `buffer` with random pixels: premultiplied RGBA (alpha in 0...1, colour ≤ alpha)
    /// or opaque RGB.
    static func randomize(_ buffer: PixelBuffer, seed: UInt64) {
        var random = SplitMix(seed: seed)
        for y in buffer.rect.y..<buffer.rect.maxY {
            for x in buffer.rect.x..<buffer.rect.maxX {
                let alpha: Float = buffer.channels == 4 ? Float.random(in: 0...1, using: &random) : 1
                buffer[x, y] = SIMD4(
                    Float.random(in: 0...1, using: &random) * alpha, Float.random(in: 0...1, using: &random) * alpha,
                    Float.random(in: 0...1, using: &random) * alpha, alpha)
            }
        }
    }
}

enum Chains {
    /// Checked specs for `filters` ("name", [argument: value]) from the built-in registry.
    static func specs(_ filters: [(String, [String: ParameterValue])]) -> [FilterSpec] {
        filters.map { name, arguments in
            let descriptor = FilterRegistry.builtIn.descriptor(named: name)!
            return try! descriptor.resolve(arguments.map { (name: $0.key, value: $0.value) }).get()
        }
    }

    /// The chain the worker builds for the same specs.
    static func chain(_ specs: [FilterSpec], edge: EdgeRule, colour: ColourMode = .gamma) -> FilterChain {
        FilterChain(filters: specs.map { FilterRegistry.builtIn.makeFilter($0) }, edge: edge, colour: colour)
    }
}

/// What a `guard case` cannot give `#require`: `try #require(reply.taskResult, "…")`.
extension WireMessage {
    /// The result this message is; nil for any other message.
    var taskResult: TaskResult? {
        if case .result(let result) = self { result } else { nil }
    }

    /// The failure this message is; nil for any other message.
    var taskFailure: TaskFailure? {
        if case .failure(let failure) = self { failure } else { nil }
    }

    /// The whole-image result this message is; nil for any other message.
    var imageResult: ImageResult? {
        if case .imageResult(let result) = self { result } else { nil }
    }

    /// The hello this message is; nil for any other message.
    var helloMessage: Hello? {
        if case .hello(let hello) = self { hello } else { nil }
    }
}

extension TaskPixels {
    /// The source pixels of an inline task; nil for shared memory.
    var inlineSource: InlinePixels? {
        if case .inline(let source) = self { source } else { nil }
    }
}
