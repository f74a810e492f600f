import BlurfarmCoordinator
import BlurfarmCore
import BlurfarmImageIO
import Foundation

extension JobPlan {
    /// Checks that each format of the plan's outputs can be written with `options` (each
    /// extension once, in order, named by its first output: a template with `{ext}` keeps each
    /// input's), before anything runs (`apply -o`).
    /// - Throws: the ``ImageIOError`` of the first that cannot (no AV1 encoder, an option the
    ///   format does not take).
    public func checkOutputFormats(_ options: EncodeOptions) throws(ImageIOError) {
        var byExtension: [String: String] = [:]
        for path in inputs.flatMap({ $0.outputs.map(\.path) }) {
            let ext = PathName.pathExtension(of: path)
            if byExtension[ext] == nil { byExtension[ext] = path }
        }
        for (ext, path) in byExtension.sorted(by: { $0.key < $1.key }) {
            _ = try ImageWriter.checkFormat(extension: ext, of: path, options: options)
        }
    }
}
