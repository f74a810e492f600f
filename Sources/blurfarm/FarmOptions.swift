import BlurfarmCommandSupport
import ArgumentParser
import BlurfarmCore
import BlurfarmFarm
import BlurfarmKernels
import BlurfarmManifest
import BlurfarmPlugins
import BlurfarmCoordinator
import BlurfarmImageIO
import BlurfarmSystem
import Foundation
import Logging

/// The options every job command shares: which farm configuration to use, and what the farm
/// logs (``FarmLocating`` says what follows from them).
struct FarmOptions: ParsableArguments, FarmLocating {
    @Option(help: ArgumentHelp(
        "The farm configuration (default: $BLURFARM_CONFIG, else the shipped config/blurfarm.conf).",
        valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp(
        "What the farm logs on standard error: trace, debug, info, notice (workers lost and replaced), warning "
            + "(workers that cannot start), error, critical.", valueName: "level"))
    var logLevel: Logger.Level = .warning
}

/// The admission limits of the commands that decode (`apply`, `run`, `check`), overriding the
/// configuration's: what is checked from an image's header before it is decoded
/// (docs/image-io.md, "Admission").
struct AdmissionOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Refuse images with more pixels than this, from the header, before decoding "
            + "(default: the configuration's pixel-limit, else 1073741824, 32768 x 32768).", valueName: "pixels"))
    var pixelLimit: Int?

    @Option(help: ArgumentHelp(
        "The most memory one image's decode may use, checked against the estimate from its header before decoding, "
            + "e.g. 16GB, 12GiB, 8000000000 (default: the configuration's memory-limit, else all this process may use).",
        valueName: "bytes"))
    var memoryLimit: ByteCount?

    @Option(help: ArgumentHelp(
        "Refuse a job asking for more outputs than this (inputs x sizes x formats of every variant), before planning it "
            + "(default: the configuration's max-outputs, else 10000000).", valueName: "outputs"))
    var maxOutputs: Int?

    func validate() throws {
        if let pixelLimit, pixelLimit < 1 { throw ValidationError("--pixel-limit must be at least 1") }
        if let maxOutputs, maxOutputs < 1 { throw ValidationError("--max-outputs must be at least 1") }
    }

    /// `configuration` with the limits given on the command line.
    func applied(to configuration: FarmConfiguration) -> FarmConfiguration {
        configuration.limited(pixelLimit: pixelLimit, memoryLimit: memoryLimit?.bytes, maxOutputs: maxOutputs)
    }
}

/// A number of bytes on the command line, as the configuration writes it
/// (``FarmConfiguration/byteCount(_:)``: `16GB`, `12GiB`, `8000000000`).
struct ByteCount: ExpressibleByArgument {
    let bytes: Int

    init?(argument: String) {
        guard let bytes = FarmConfiguration.byteCount(argument) else { return nil }
        self.bytes = bytes
    }
}

/// Exit statuses of the job commands (docs/commands.md).
enum ExitStatus {
    /// Every output was written (`run`), the job is valid and every input readable (`check`).
    static let success: Int32 = 0
    /// Some outputs failed (the others were written), or (`check`) some inputs cannot be read.
    static let someFailed: Int32 = 1
    /// A manifest or the configuration is invalid: nothing ran.
    static let invalid: Int32 = 2
    /// Another run holds the lock of a job named (`run` without `--wait`): nothing ran.
    static let locked: Int32 = 3
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
