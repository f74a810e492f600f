import BlurfarmCore
import BlurfarmPluginABI
import BlurfarmSystem

/// A loaded plugin: its checked table, behind a safe API. Made by ``PluginLoader``; the
/// library stays loaded while the process lives, so the table's pointers stay valid.
///
/// The only unsafe code of the plugin boundary is here and in ``PluginFilter``'s buffer
/// handling: reading the table once, and calling its three functions.
public final class Plugin: @unchecked Sendable {
    /// The ABI versions this blurfarm loads: the one of `Plugins/include/blurfarm_plugin.h`.
    public static let supportedABIVersion = BLURFARM_PLUGIN_ABI_VERSION
    /// The longest name or description read from a table, in bytes (a policy against a
    /// string that is not terminated).
    static let longestString = 4096
    /// The most parameters a plugin may declare (a policy against a garbage count).
    static let mostParameters = 64
    /// Table flag bits this version understands: none.
    static let knownTableFlags: UInt32 = 0
    /// Parameter flag bits this version understands.
    static let knownParameterFlags: UInt32 = BLURFARM_PARAMETER_MINIMUM_EXCLUSIVE

    /// The filter's name, description and parameters, with the library's path as its origin.
    public let descriptor: FilterDescriptor
    /// The library's path.
    public let path: String
    private let table: UnsafePointer<blurfarm_plugin>

    /// Checks the table an entry point returned; `path` names the library in errors.
    init(table: UnsafePointer<blurfarm_plugin>, path: String, expectedName: String) throws(PluginError) {
        func refuse(_ message: String) -> PluginError { PluginError(path, message) }
        // The version is the first field in every version of the ABI: read nothing else first.
        let version = table.pointee.abi_version
        guard version == Self.supportedABIVersion else {
            throw refuse(
                "built for plugin ABI version \(version); this blurfarm supports version \(Self.supportedABIVersion)")
        }
        let entry = table.pointee
        guard entry.flags & ~Self.knownTableFlags == 0 else {
            throw refuse("the table sets flags 0x\(String(entry.flags, radix: 16)), which ABI version \(version) does not define")
        }
        guard let name = try Self.string(entry.name, "the name", path) else { throw refuse("the table has no name") }
        guard name == expectedName else {
            throw refuse("the plugin calls itself '\(name)'; its file must be named lib\(name).so")
        }
        let summary = try Self.string(entry.description, "the description", path) ?? ""
        guard entry.run != nil else { throw refuse("the table has no run function") }
        let count = Int(entry.parameter_count)
        guard count <= Self.mostParameters else {
            throw refuse("the table declares \(count) parameters; at most \(Self.mostParameters) are allowed")
        }
        guard count == 0 || entry.parameters != nil else {
            throw refuse("the table declares \(count) parameters but gives none")
        }
        var parameters: [ParameterDescriptor] = []
        for index in 0..<count {
            let declared = entry.parameters![index]
            let parameter = try Self.parameter(declared, index: index, path: path)
            guard !parameters.contains(where: { $0.name == parameter.name }) else {
                throw refuse("parameter '\(parameter.name)' is declared twice")
            }
            parameters.append(parameter)
        }
        self.table = table
        self.path = path
        descriptor = FilterDescriptor(name: name, summary: summary, parameters: parameters, origin: .plugin(path: path))
    }

    /// A C string of the table, checked to end within ``longestString`` bytes and to be UTF-8.
    static func string(_ pointer: UnsafePointer<CChar>?, _ what: String, _ path: String) throws(PluginError)
        -> String?
    {
        guard let pointer else { return nil }
        guard let length = Syscalls.boundedLength(pointer, limit: longestString) else {
            throw PluginError(path, "\(what) is longer than \(longestString) bytes or not terminated")
        }
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: length)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PluginError(path, "\(what) is not UTF-8")
        }
        return text
    }

    /// One parameter's declaration, checked: a valid name, a known type and flags, a finite
    /// range that holds the default.
    private static func parameter(_ p: blurfarm_parameter, index: Int, path: String) throws(PluginError)
        -> ParameterDescriptor
    {
        guard let name = try string(p.name, "parameter \(index + 1)'s name", path) else {
            throw PluginError(path, "parameter \(index + 1) has no name")
        }
        func refuse(_ message: String) -> PluginError { PluginError(path, "parameter '\(name)': \(message)") }
        guard PluginName.isValid(name) else {
            throw refuse("a parameter name is lower-case letters, digits and '-', starting with a letter")
        }
        guard !FilterSpec.regionKeys.contains(name) else {
            throw refuse("'regions' and 'invert' are every filter's (where it applies in its chain), not a plugin's")
        }
        let summary = try string(p.description, "parameter '\(name)''s description", path) ?? ""
        guard p.flags & ~knownParameterFlags == 0 else {
            throw refuse("flags 0x\(String(p.flags, radix: 16)) are not defined by ABI version \(supportedABIVersion)")
        }
        let kind: ParameterDescriptor.Kind
        let defaultValue: ParameterValue
        switch p.type {
        case BLURFARM_PARAMETER_NUMBER.rawValue:
            kind = .number
            defaultValue = .number(p.default_value)
        case BLURFARM_PARAMETER_INTEGER.rawValue:
            kind = .integer
            guard let whole = Int(exactly: p.default_value) else { throw refuse("the default is not a whole number") }
            defaultValue = .integer(whole)
        case BLURFARM_PARAMETER_BOOLEAN.rawValue:
            guard p.default_value == 0 || p.default_value == 1 else { throw refuse("a boolean's default is 0 or 1") }
            return ParameterDescriptor(
                name: name, kind: .boolean, defaultValue: .boolean(p.default_value == 1), summary: summary)
        default:
            throw refuse("type \(p.type) is not defined by ABI version \(supportedABIVersion)")
        }
        guard p.minimum.isFinite, p.maximum.isFinite, p.minimum <= p.maximum else {
            throw refuse("the range \(p.minimum)...\(p.maximum) is not a finite range")
        }
        let declaration = ParameterDescriptor(
            name: name, kind: kind, defaultValue: defaultValue, minimum: p.minimum,
            minimumIsExclusive: p.flags & BLURFARM_PARAMETER_MINIMUM_EXCLUSIVE != 0, maximum: p.maximum,
            summary: summary)
        guard case .success = declaration.check(defaultValue) else {
            throw refuse("the default \(defaultValue) is not \(declaration.rangeDescription)")
        }
        return declaration
    }

    /// What a call of one of the table's functions returned, when it is not success.
    struct CallFailure: Error {
        let code: Int32
        let message: String
    }

    /// The input rectangle the filter needs for `output`; the default (no function in the
    /// table) is `output` itself.
    func regionOfInterest(_ values: [Double], output: Rect, image: Rect) -> Result<Rect, CallFailure> {
        guard let function = table.pointee.region_of_interest else { return .success(output) }
        return callRectFunction(values, output, image) { function($0, $1, $2, $3) }
    }

    /// The output rectangle for an input transparent outside `input`; the default is `input`.
    func domainOfDefinition(_ values: [Double], input: Rect, image: Rect) -> Result<Rect, CallFailure> {
        guard let function = table.pointee.domain_of_definition else { return .success(input) }
        return callRectFunction(values, input, image) { function($0, $1, $2, $3) }
    }

    private func callRectFunction(
        _ values: [Double], _ given: Rect, _ image: Rect,
        _ call: (UnsafePointer<Double>, UnsafePointer<blurfarm_rect>, UnsafePointer<blurfarm_rect>,
            UnsafeMutablePointer<blurfarm_rect>) -> Int32
    ) -> Result<Rect, CallFailure> {
        var given = blurfarm_rect(given), image = blurfarm_rect(image)
        var result = blurfarm_rect(x: 0, y: 0, width: -1, height: -1)
        let code = values.withUnsafeBufferPointer { v in
            // A plugin without parameters still gets a valid pointer.
            withUnsafePointer(to: 0.0) { none in call(v.baseAddress ?? none, &given, &image, &result) }
        }
        guard code == BLURFARM_OK else { return .failure(CallFailure(code: code, message: "")) }
        guard let rect = Rect(result) else {
            return .failure(CallFailure(
                code: BLURFARM_ERROR_INVALID_ARGUMENT,
                message: "returned the rectangle \(result.width)x\(result.height)+\(result.x)+\(result.y)"))
        }
        return .success(rect)
    }

    /// Runs the filter over 4-channel buffers: the pixels of `output.rect` from `input`.
    func run(_ values: [Double], input: PixelBuffer, output: PixelBuffer, image: Rect) -> Result<Void, CallFailure> {
        precondition(input.channels == 4 && output.channels == 4, "plugins take premultiplied RGBA")
        let run = table.pointee.run!
        var message = [CChar](repeating: 0, count: 1024)
        var imageRect = blurfarm_rect(image)
        let code = input.withUnsafePixels { inPixels in
            output.withUnsafePixels { outPixels in
                var inBuffer = blurfarm_buffer(input, data: inPixels)
                var outBuffer = blurfarm_buffer(output, data: outPixels)
                return values.withUnsafeBufferPointer { v in
                    withUnsafePointer(to: 0.0) { none in
                        message.withUnsafeMutableBufferPointer { m in
                            run(v.baseAddress ?? none, &inBuffer, &outBuffer, &imageRect, m.baseAddress, m.count - 1)
                        }
                    }
                }
            }
        }
        if code == BLURFARM_OK { return .success(()) }
        message[message.count - 1] = 0  // whatever the plugin wrote, the text ends here
        // Data, not text to print: control characters escaped.
        let text = ShownName.of(bytes: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
        return .failure(CallFailure(code: code, message: text))
    }

    /// The name of a return code of the ABI, e.g. `BLURFARM_ERROR_FAILED`.
    static func codeName(_ code: Int32) -> String? {
        switch code {
        case BLURFARM_ERROR_INVALID_ARGUMENT: "BLURFARM_ERROR_INVALID_ARGUMENT"
        case BLURFARM_ERROR_OUT_OF_MEMORY: "BLURFARM_ERROR_OUT_OF_MEMORY"
        case BLURFARM_ERROR_FAILED: "BLURFARM_ERROR_FAILED"
        case BLURFARM_ERROR_UNSUPPORTED: "BLURFARM_ERROR_UNSUPPORTED"
        default: nil
        }
    }
}

extension blurfarm_rect {
    init(_ rect: Rect) {
        self.init(x: Int64(rect.x), y: Int64(rect.y), width: Int64(rect.width), height: Int64(rect.height))
    }
}

extension blurfarm_buffer {
    init(_ buffer: PixelBuffer, data: UnsafeMutablePointer<Float>) {
        self.init(
            data: data, rect: blurfarm_rect(buffer.rect), row_stride: Int64(buffer.rowStride),
            channels: UInt32(buffer.channels), flags: 0, reserved: (0, 0, 0, 0))
    }
}

extension Rect {
    /// The rectangle a plugin returned, when it is one: no negative size, and every edge
    /// within ±2^40 pixels (nothing larger can be allocated).
    init?(_ r: blurfarm_rect) {
        let limit: Int64 = 1 << 40
        guard r.width >= 0, r.height >= 0, r.width <= limit, r.height <= limit, (-limit...limit).contains(r.x),
            (-limit...limit).contains(r.y)
        else { return nil }
        self.init(x: Int(r.x), y: Int(r.y), width: Int(r.width), height: Int(r.height))
    }
}
