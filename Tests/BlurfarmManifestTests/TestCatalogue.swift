import BlurfarmCore

/// The filter catalogue the tests decode against: copies of the built-in descriptors (the
/// test target does not depend on the kernels) and a plugin-like filter with a required
/// parameter and string, choice and boolean parameters, so every parameter kind is covered.
enum TestCatalogue {
    static let gaussian = FilterDescriptor(
        name: "gaussian", summary: "Gaussian blur",
        parameters: [
            ParameterDescriptor(
                name: "sigma", kind: .number, defaultValue: .number(10), minimum: 0, minimumIsExclusive: true,
                maximum: 1000, summary: "standard deviation in pixels")
        ],
        origin: .builtIn)

    static let motion = FilterDescriptor(
        name: "motion", summary: "motion blur",
        parameters: [
            ParameterDescriptor(
                name: "radius", kind: .number, defaultValue: .number(20), minimum: 0, maximum: 2000, summary: "pixels"),
            ParameterDescriptor(
                name: "angle", kind: .number, defaultValue: .number(0), minimum: -360, maximum: 360, summary: "degrees"),
            ParameterDescriptor(name: "samples", kind: .integer, minimum: 1, maximum: 4000, summary: "n"),
        ],
        origin: .builtIn)

    static let vignette = FilterDescriptor(
        name: "vignette", summary: "a plugin",
        parameters: [
            ParameterDescriptor(
                name: "strength", kind: .number, isRequired: true, minimum: 0, maximum: 1, summary: "0...1"),
            ParameterDescriptor(
                name: "shape", kind: .string(choices: ["round", "oval"]), defaultValue: .string("round"), summary: ""),
            ParameterDescriptor(name: "label", kind: .string(choices: []), defaultValue: .string(""), summary: ""),
            ParameterDescriptor(name: "mirrored", kind: .boolean, defaultValue: .boolean(false), summary: ""),
        ],
        origin: .plugin(path: "plugins/libvignette.so"))

    static let all = [gaussian, motion, vignette]
}
