// swift-tools-version: 6.1
// blurfarm: a batch render farm for image filters.
//
// Module layout (lower modules never import higher ones):
//   BlurfarmSystem    every system call: one EINTR helper, one SystemCallError (after swift-nio's
//                     NIOPosix/System.swift); paths as bytes, threads that report refusal, processes
//                     (spawn, wait, signals, limits), memory mappings, inotify; the stop request; CSystemShims
//   BlurfarmCore      geometry, pixel buffers and their samples, tile grid, edge rules, filter descriptors,
//                     the pixel checksum (XXH3 through CXXHash): no I/O; System (its memory mappings)
//   BlurfarmKernels   the filter math (gaussian, motion, colour); depends on Core and CKernels (the
//                     8-bit gaussian's 16-bit fixed-point passes, in C for AVX2's 16-bit multiply-high)
//   BlurfarmManifest  the job manifest language and farm configuration; depends on Core, System
//   BlurfarmEngine    renders a filter chain over an image, tile by tile, on threads; Core + Kernels + System
//   BlurfarmImageIO   decoding and encoding through libvips (the only module that imports it)
//   BlurfarmWire      the coordinator-worker protocol: framed messages, no system call; depends on Core
//   BlurfarmSharedMemory  memfd segments shared by the coordinator and its workers; Core + System
//   BlurfarmPlugins   the plugin host: loads plugins by name from the plugin folders (the only
//                     module that calls dlopen) and makes them filters; Core, Kernels, System, the ABI header
//   BlurfarmDetection how a photo is searched for a detector's boxes (`PhotoSearch`: decoded as shown
//                     at the schedule's sizes, the passes merged) and a detector's kept sessions
//                     and identity; Core, ImageIO, Plugins, State (the library's content hash)
//   BlurfarmWorker    the worker process's logic (message loop, tile tasks, whole-image tasks: decode,
//                     render, encode; detection tasks); Core, Kernels, Engine, ImageIO, Wire,
//                     SharedMemory, Plugins, Detection, System
//   BlurfarmPool      the pool of worker processes: the pure PoolScheduler, the supervisor, the
//                     launcher, shared segments, task timeouts, `WorkerPool` (an ImageRendering);
//                     Core, Kernels, Engine, Wire, SharedMemory, System (never BlurfarmWorker)
//   BlurfarmState     the state folder: output records (and created folders, failed inputs,
//                     placeholders), job locks, file fingerprints (CXXHash), input widths, shard
//                     loads, the output map's format, real paths; Core, ImageIO, System
//   BlurfarmCoordinator  plans jobs (globs, outputs) and runs them, in process or in the Pool,
//                        deciding what is up to date from the State; the CLI drives it
//   BlurfarmFarm      the farm as a library: jobs in, events and reports out, one pool of workers
//                     shared by every job (`Farm`, `FarmJob`, `FarmEvent`), which `run`, the
//                     service and the cluster's shards drive; Coordinator, State, Pool
//   BlurfarmWatch     `run --watch`: the input folders watched with inotify (`FolderWatcher`) and
//                     `JobWatch`, the loop that runs a job again once its inputs are quiet;
//                     Coordinator, Manifest, System
//   BlurfarmCluster   a job's shards on a cluster: `--shard` resolution, the split, Slurm run folders,
//                     the sbatch/scontrol client, the finisher's merge, status and resume decisions;
//                     typed errors, no printing; Coordinator, ImageIO (the inputs' headers), System
//   BlurfarmAPI       the Codable types of the farm service's API (docs/api.md), shared by the server,
//                     the client and the tests: Foundation only
//   BlurfarmClient    an async typed client of that API (AsyncHTTPClient), and how a
//                     job reads as text; API, System (names shown escaped)
//   BlurfarmServer    the farm service of `blurfarm serve`: the durable queue (GRDB), the job state
//                     machine, the HTTP API (Hummingbird); BlurfarmFarm's Farm through FarmBridge
//   BlurfarmBench     the benchmarks of `blurfarm bench`, each returning typed rows, and the comparison
//                     with libvips 8.18 warm in-process (scripts/vips818-bench.py); runs `blurfarm`
//                     as a process, so it needs Core, Kernels, Engine, Manifest and ImageIO only
//   blurfarm          the command-line driver
//   blurfarm-test-worker  the tests' worker whose `motion` stalls once (Tests/BlurfarmTestWorker)
//   Plugins/          the plugin ABI (Plugins/include/blurfarm_plugin.h), the example plugins and the
//                     face detector, built as dynamic libraries (libvignette.so, libzoom.so,
//                     libfaces.so) by `swift build`
import PackageDescription

#if arch(x86_64)
/// The kernels are built for x86-64-v3 (AVX2, 2013 on) unless BLURFARM_BASELINE_CPU is set;
/// a check in CSystemShims refuses to run on an older CPU with a clear message.
let vectorCPU = Context.environment["BLURFARM_BASELINE_CPU"] == nil
#else
let vectorCPU = false
#endif

let strict: [SwiftSetting] =
    [.swiftLanguageMode(.v6)] + (vectorCPU ? [.unsafeFlags(["-target-cpu", "haswell"])] : [])

/// The pixel code is optimised in debug builds too: unoptimised SIMD loops run a hundred times
/// slower, which would make `swift test` on real photos take minutes.
let pixelCode: [SwiftSetting] = strict + [.unsafeFlags(["-O"], .when(configuration: .debug))]

/// Release builds of the two executables carry the Swift runtime and Foundation inside them
/// (`-static-stdlib`) instead of loading a dozen shared Swift libraries at every start: the
/// dynamic linker's symbol lookups into them were the largest part of a process's start (a 4K
/// `apply` 0.94 of the time: docs/performance.md, sixth session). The runtime inside is private
/// (nothing of it is exported), so a plugin written in Swift loads the shared runtime beside it
/// and runs on that one: the two meet only through the plugin ABI's C calls (docs/plugins.md).
/// lld links them: gold warns about `mktemp` in the toolchain's own static Foundation. Debug
/// builds stay dynamic: the test bundles, which link the executables' modules, run on XCTest's
/// shared runtime and Foundation. The release executables export none of their own symbols
/// either (the toolchain's static link asks for `-export-dynamic`; `--no-export-dynamic` after
/// it undoes that): nothing looks them up (a plugin calls nothing of the host, which reaches it
/// through the table its entry point returns; libvips and the plugins are found with `dlsym` on
/// their own handles), and a dynamic symbol table of 45,000 names put every symbol lookup of
/// the loader, and the runtime's `dladdr` at its start, through it (`blurfarm help` 0.935× the
/// time: docs/performance.md).
let staticRuntime: (swift: [SwiftSetting], linker: [LinkerSetting]) = (
    [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
    [.unsafeFlags(["-static-stdlib", "-use-ld=lld", "-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
)

let package = Package(
    name: "blurfarm",
    products: [
        .executable(name: "blurfarm", targets: ["blurfarm"]),
        // The worker process the coordinator starts, beside `blurfarm`: without the coordinator,
        // it starts in milliseconds; it links libvips and starts it only for its first
        // whole-image task.
        .executable(name: "blurfarm-worker", targets: ["blurfarm-worker"]),
        // The example plugins (docs/plugins.md): each a shared library lib<name>.so beside the
        // executable, where the shipped configuration's plugin folder '{build}' points.
        .library(name: "vignette", type: .dynamic, targets: ["vignette"]),
        .library(name: "zoom", type: .dynamic, targets: ["zoom"]),
        // The face detector (docs/regions.md#detecting): libfaces.so, found as the plugins are.
        .library(name: "faces", type: .dynamic, targets: ["faces"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // The farm service (`blurfarm serve`): HTTP, signals and the durable queue.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        // What the server imports of Hummingbird's own dependencies: its connection guard is a
        // NIO channel handler over HTTP parts.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The client commands' HTTP (`submit`, `jobs`, `job`, ...): on the NIO the server already
        // links, so `blurfarm` carries no libcurl (FoundationNetworking's URLSession loaded it and
        // thirty libraries of its own at every start of every command).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .target(name: "BlurfarmCore", dependencies: ["BlurfarmSystem", "CXXHash"], swiftSettings: pixelCode),
        .target(name: "BlurfarmKernels", dependencies: ["BlurfarmCore", "CKernels"], swiftSettings: pixelCode),
        // The 8-bit gaussian's 16-bit fixed-point passes (AVX2's 16-bit multiply-high, which
        // Swift's SIMD types do not reach) and the Lanczos resampler's Float32 passes; optimised
        // in debug builds too, as the Swift kernels.
        .target(
            name: "CKernels",
            cSettings: [.unsafeFlags(vectorCPU ? ["-O2", "-mavx2"] : ["-O2"])]),
        .target(name: "BlurfarmManifest", dependencies: ["BlurfarmCore", "BlurfarmSystem"], swiftSettings: strict),
        .target(
            name: "BlurfarmEngine", dependencies: ["BlurfarmCore", "BlurfarmKernels", "BlurfarmImageIO", "BlurfarmSystem"], swiftSettings: pixelCode),
        .target(name: "BlurfarmWire", dependencies: ["BlurfarmCore"], swiftSettings: strict),
        .target(name: "BlurfarmSharedMemory", dependencies: ["BlurfarmCore", "BlurfarmSystem"], swiftSettings: strict),
        // The plugin ABI: one C header, a module for Swift (the host and Swift plugins).
        // SwiftPM reserves Plugins/ for package plugins, hence the explicit paths.
        .systemLibrary(name: "BlurfarmPluginABI", path: "Plugins/include"),
        .target(
            name: "BlurfarmPlugins", dependencies: ["BlurfarmCore", "BlurfarmKernels", "BlurfarmSystem", "BlurfarmPluginABI"],
            swiftSettings: strict),
        .target(
            name: "vignette", path: "Plugins/vignette", publicHeadersPath: ".", cSettings: [.headerSearchPath("../include")],
            linkerSettings: [.linkedLibrary("m")]),
        .target(name: "zoom", dependencies: ["BlurfarmPluginABI"], path: "Plugins/zoom", swiftSettings: pixelCode),
        // CenterFace through Debian's OpenCV DNN (libopencv-dnn-dev 4.6, which ships no
        // pkg-config file: its headers' folder is named here); the C++ stays in the plugin.
        .target(
            name: "faces", path: "Plugins/faces", publicHeadersPath: ".",
            cxxSettings: [.headerSearchPath("../include"), .unsafeFlags(["-isystem", "/usr/include/opencv4", "-O2"])],
            linkerSettings: [.linkedLibrary("opencv_dnn"), .linkedLibrary("opencv_core")]),
        .target(
            name: "BlurfarmWorker",
            dependencies: [
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmEngine", "BlurfarmImageIO", "BlurfarmWire",
                "BlurfarmSharedMemory", "BlurfarmPlugins", "BlurfarmDetection", "BlurfarmSystem",
            ],
            swiftSettings: strict),
        .target(
            name: "BlurfarmDetection", dependencies: ["BlurfarmCore", "BlurfarmImageIO", "BlurfarmPlugins", "BlurfarmState"],
            swiftSettings: strict),
        .target(name: "BlurfarmSystem", dependencies: ["CSystemShims"], swiftSettings: strict),
        .target(
            name: "BlurfarmPool",
            dependencies: [
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmEngine", "BlurfarmWire", "BlurfarmSharedMemory", "BlurfarmSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .target(
            name: "BlurfarmState",
            dependencies: [
                "BlurfarmCore", "BlurfarmImageIO", "BlurfarmSystem", "CXXHash", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        .target(
            name: "BlurfarmCoordinator",
            dependencies: [
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmEngine", "BlurfarmManifest", "BlurfarmImageIO",
                "BlurfarmSystem", "BlurfarmState", "BlurfarmPlugins", "BlurfarmDetection",
            ],
            swiftSettings: strict),
        // libvips through pkg-config's glib flags: vips.pc adds -pthread, which SwiftPM refuses
        // with a warning; the headers are in the standard path, the libraries in the module map.
        .systemLibrary(
            name: "CVips", path: "Sources/CVips", pkgConfig: "gobject-2.0",
            providers: [.apt(["libvips-dev"])]),
        .target(name: "CVipsShim", dependencies: ["CVips"]),
        // 8-bit JPEG through libjpeg-turbo (Debian's, the one libvips links) on the calling
        // thread, with libvips's settings: the streamed paths' decoder and encoder.
        .target(name: "CJPEGCodec", linkerSettings: [.linkedLibrary("jpeg")]),
        // xxHash (Debian's libxxhash-dev): the pixel checksum of the wire protocol, and the
        // hashes of inputs and outputs in the records of up-to-date outputs (docs/scheduling.md).
        .systemLibrary(
            name: "CXXHash", path: "Sources/CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),
        .target(
            name: "CSystemShims",
            cSettings: vectorCPU ? [.define("BLURFARM_REQUIRES_X86_64_V3")] : []),
        // What files' bytes say, without a codec: JPEG and PNM structure checks, EXIF's
        // orientation, metadata stripped from JPEG, WebP and AVIF containers.
        .target(name: "BlurfarmFileFormats", dependencies: ["BlurfarmSystem"], swiftSettings: strict),
        .target(
            name: "BlurfarmImageIO",
            dependencies: [
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmSystem", "BlurfarmFileFormats", "CVips", "CVipsShim", "CJPEGCodec",
            ],
            swiftSettings: pixelCode),
        .target(
            name: "BlurfarmCluster",
            dependencies: [
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmManifest", "BlurfarmCoordinator", "BlurfarmState", "BlurfarmSystem",
            ],
            swiftSettings: strict),
        .target(
            name: "BlurfarmFarm",
            dependencies: [
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmEngine", "BlurfarmManifest", "BlurfarmImageIO", "BlurfarmSystem",
                "BlurfarmPool", "BlurfarmState", "BlurfarmCoordinator", "BlurfarmPlugins", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // What only the commands need, above the farm: their options in words, the lines
        // they print, signals, where the installation is, which engine renders.
        .target(
            name: "BlurfarmCommandSupport",
            dependencies: [
                "BlurfarmFarm", "BlurfarmCore", "BlurfarmKernels", "BlurfarmEngine", "BlurfarmManifest", "BlurfarmImageIO",
                "BlurfarmSystem", "BlurfarmPool", "BlurfarmState", "BlurfarmCoordinator", "BlurfarmPlugins", "BlurfarmWatch",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .target(
            name: "BlurfarmWatch", dependencies: ["BlurfarmCore", "BlurfarmManifest", "BlurfarmSystem", "BlurfarmCoordinator"],
            swiftSettings: strict),
        .target(name: "BlurfarmAPI", swiftSettings: strict),
        .target(
            name: "BlurfarmClient",
            dependencies: [
                "BlurfarmAPI", "BlurfarmSystem", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict),
        .target(
            name: "BlurfarmServer",
            dependencies: ["BlurfarmFarm", "BlurfarmCommandSupport",
                "BlurfarmAPI", "BlurfarmCore", "BlurfarmKernels", "BlurfarmManifest", "BlurfarmImageIO", "BlurfarmCoordinator", "BlurfarmState",
                "BlurfarmPool", "BlurfarmSystem",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict),
        .target(
            name: "BlurfarmBench",
            dependencies: [
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmEngine", "BlurfarmManifest", "BlurfarmImageIO", "BlurfarmAPI",
                "BlurfarmClient",
            ],
            swiftSettings: pixelCode),
        .executableTarget(
            name: "blurfarm",
            dependencies: [
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmImageIO", "BlurfarmManifest", "BlurfarmCoordinator", "BlurfarmState",
                "BlurfarmWatch", "BlurfarmFarm", "BlurfarmCommandSupport", "BlurfarmSystem", "BlurfarmPlugins", "CSystemShims", "BlurfarmServer",
                "BlurfarmCluster", "BlurfarmAPI", "BlurfarmClient", "BlurfarmBench",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + staticRuntime.swift, linkerSettings: staticRuntime.linker),
        .executableTarget(
            name: "blurfarm-worker",
            dependencies: ["BlurfarmWorker", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict + staticRuntime.swift, linkerSettings: staticRuntime.linker),
        // The worker of the tests that stall a worker in the middle of a whole-image task
        // (WholeImageTests): `blurfarm-worker` whose `motion` stalls once, as the `fault` test
        // plugin does, where no plugin goes. Built beside the executables, never installed.
        .executableTarget(
            name: "blurfarm-test-worker", dependencies: ["BlurfarmCore", "BlurfarmKernels", "BlurfarmWorker"],
            path: "Tests/BlurfarmTestWorker", swiftSettings: strict),
        .target(
            name: "BlurfarmTestSupport", dependencies: ["BlurfarmCore", "BlurfarmState", "BlurfarmSystem"], path: "Tests/BlurfarmTestSupport",
            exclude: ["test-plugins"],  // C sources the tests compile with cc, read through #filePath
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmKernelsTests",
            dependencies: ["BlurfarmTestSupport", 
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmEngine", "BlurfarmImageIO", "BlurfarmPlugins",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmWireTests",
            dependencies: [
                "BlurfarmTestSupport", "BlurfarmCore", "BlurfarmWire", "CXXHash",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmImageIOTests",
            dependencies: [
                "BlurfarmTestSupport", "BlurfarmCore", "BlurfarmFileFormats", "BlurfarmImageIO", "BlurfarmKernels", "BlurfarmSystem",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmManifestTests",
            dependencies: [
                "BlurfarmTestSupport", "BlurfarmCore", "BlurfarmManifest",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["bad-manifests"],  // fixtures, read through #filePath
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmWorkerTests",
            dependencies: ["BlurfarmTestSupport", 
                "BlurfarmCore", "BlurfarmKernels", "BlurfarmEngine", "BlurfarmImageIO", "BlurfarmWire", "BlurfarmSharedMemory",
                "BlurfarmWorker", "BlurfarmPlugins", "BlurfarmDetection",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmPluginsTests",
            dependencies: [
                "BlurfarmTestSupport", "BlurfarmCore", "BlurfarmKernels", "BlurfarmEngine", "BlurfarmPlugins",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmCoordinatorTests",
            dependencies: [
                "BlurfarmTestSupport", "BlurfarmCore", "BlurfarmKernels", "BlurfarmCoordinator", "BlurfarmState", "BlurfarmManifest", "BlurfarmWire",
                "BlurfarmPool", "BlurfarmSystem", "BlurfarmEngine", "BlurfarmPlugins", "BlurfarmDetection",
                .product(name: "PropertyBased", package: "swift-property-based"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmClusterTests",
            dependencies: [
                "BlurfarmTestSupport", "BlurfarmCluster", "BlurfarmCoordinator", "BlurfarmState", "BlurfarmCore", "BlurfarmSystem",
                "BlurfarmManifest", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmAPITests",
            dependencies: [
                "BlurfarmTestSupport", "BlurfarmAPI", "BlurfarmClient", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmServerTests",
            dependencies: [
                "BlurfarmTestSupport", "BlurfarmAPI", "BlurfarmClient", "BlurfarmServer", "BlurfarmFarm", "BlurfarmCore", "BlurfarmKernels",
                "BlurfarmManifest", "BlurfarmCoordinator", "BlurfarmState",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmBenchTests",
            dependencies: ["BlurfarmTestSupport", "BlurfarmBench"],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmCommandSupportTests",
            dependencies: ["BlurfarmCommandSupport", "BlurfarmFarm", "BlurfarmCore", "BlurfarmKernels", "BlurfarmManifest", "BlurfarmCoordinator"],
            swiftSettings: strict),
        .testTarget(
            name: "BlurfarmCLITests",
            dependencies: ["BlurfarmFarm", "BlurfarmCommandSupport",
                "BlurfarmTestSupport", "blurfarm", "BlurfarmCore", "BlurfarmImageIO", "BlurfarmCoordinator", "BlurfarmState",
                "BlurfarmPool", "BlurfarmManifest", "BlurfarmKernels", "BlurfarmEngine",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["web", "faces"],  // the status page's browser test (Python), run by ServeTests; photos with faces
            swiftSettings: strict),
    ]
)
