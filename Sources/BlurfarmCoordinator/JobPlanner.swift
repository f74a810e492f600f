import BlurfarmState
import BlurfarmSystem
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmManifest
import Foundation

/// Expands a job's globs over the file system and names every output: the plan that
/// `blurfarm check` prints and `blurfarm run` carries out.
public enum JobPlanner {
    /// Plans `job`, read from `manifestPath`: one output per input and variant, and per size
    /// of a variant with `sizes` (``PlannedOutput/largestSize``); `reads` names the other files the job reads (the
    /// configuration, plugin libraries). Problems that only the file system shows are
    /// diagnostics at the variant's `path:` in the manifest: two outputs that are one file, an
    /// output that is one of the job's inputs or a file it reads, an output that the inputs'
    /// globs would take as an input on the next run, and a placeholder that would climb out of
    /// its folder. Files are compared as the kernel sees them (device and inode, after every
    /// link, `.` and `..`), never by their spelling. Files the job's own variants could write
    /// are never inputs (docs/manifest.md). The sizes of a variant with `sizes` that are wider
    /// than the input (read from its header) and not to be enlarged are not outputs: the plan
    /// lists them as ``PlannedInput/notEnlarged``; the widths come from `sizes` (kept with the
    /// job's state, or read from the headers).
    ///
    /// With `confinement` (a served job's roots), the region files and the inputs' headers the
    /// plan reads are opened beneath its roots: a file swapped for a link out of them while the
    /// job plans is not read (its input is left out, saying so), where the roots' check of the
    /// plan, after it, would see the file as it is then.
    ///
    /// `runFiles` are the files the run writes besides the outputs (`run --report` and `--log`):
    /// each is an error when it is a file the job reads or writes, as the output map is (a
    /// report written over the manifest, an input or an output lost it).
    ///
    /// `stopped` is asked between folders of the glob walk and between inputs: once it says
    /// true, planning ends with ``stoppedDiagnostic`` (a served job cancelled while it plans).
    /// The inputs are planned in parts of at least `partInputs`, one a core, at once; what the
    /// plan holds of them goes to `spill` as it is made, where there is one (``PlannedInputs``).
    public static func plan(
        _ job: JobSpec, manifestPath: String, defaultTile: Int, reads: [String] = [], sizes: InputSizes = InputSizes(),
        outputLimit: Int = .max, partInputs: Int = planPartInputs, spill: SpillFile? = nil,
        runFiles: [RunFile] = [], confinement: RootConfinement? = nil, stopped: @escaping @Sendable () -> Bool = { false }
    ) -> Result<JobPlan, Diagnostics> {
        let folder = PathName.folder(of: manifestPath)
        let base = folder.isEmpty ? "." : folder
        var diagnostics: [Diagnostic] = []
        // Paths in the manifest are text: one of the characters that stand for bytes in file
        // names (PathEncoding) would be read as a byte, so it is refused.
        func location(_ index: Int, in locations: [SourceLocation]) -> SourceLocation? {
            index < locations.count ? locations[index] : nil
        }
        let texts = job.inputs.enumerated().map { ($1, "input glob", location($0, in: job.inputLocations)) }
            + job.exclude.enumerated().map { ($1, "exclude glob", location($0, in: job.excludeLocations)) }
            + job.outputs.map { ($0.pathTemplate.text, "path", $0.pathLocation) }
        for (text, what, location) in texts where !PathEncoding.isUTF8(text) {
            diagnostics.append(.error(
                "\(what) '\(ShownName.of(bytes: Array(text.utf8)))' holds characters U+F780…U+F7FF, which stand for "
                    + "bytes that are not UTF-8 in file names (docs/security.md)", at: location))
        }
        if !diagnostics.isEmpty { return .failure(Diagnostics(diagnostics)) }

        let includes = job.inputs.compactMap { try? GlobPattern($0) }
        let excludes = job.exclude.compactMap { try? GlobPattern($0) }
        // The outputs' globs, relative, and absolute for the files absolute input globs find.
        // The output map is one of the job's outputs too (never an input): relative to the
        // manifest's folder when it lies below it (`run --map` gives it absolute).
        let folderPath = normalise(RealPath.absolute(base))
        let mapGlob = job.map.flatMap { map -> GlobPattern? in
            let path = normalise(RealPath.absolute(join(base, map)))
            let below = folderPath == "/" ? String(path.dropFirst())
                : path.hasPrefix(folderPath + "/") ? String(path.dropFirst(folderPath.count + 1)) : path
            return try? GlobPattern(GlobPattern.escaping(below))
        }
        let relativeOutputs = job.outputs.compactMap { outputGlob($0.pathTemplate, job: job.name, variant: $0.name) }
            + (mapGlob.map { [$0] } ?? [])
        let absoluteBase = GlobPattern.escaping(folderPath)
        let ownOutputs = relativeOutputs + relativeOutputs.compactMap { glob in
            glob.isAbsolute ? nil : try? GlobPattern((absoluteBase == "/" ? "/" : absoluteBase + "/") + glob.text)
        }
        /// Whether a path (relative to the manifest's folder, or absolute) is left out of the inputs.
        @Sendable func isLeftOut(_ relative: String) -> Bool {
            excludes.contains { $0.matches(relative) } || ownOutputs.contains { $0.matches(relative) }
        }
        // Each file once, from the first glob that matches it ({relpath} is its), and its identity.
        var found = FoundInputs()
        var refused: [String] = []
        // Per input glob: the files it matches, those left out, and those it would match but
        // for case (for the hint when it matches none).
        var matchCounts: [(taken: Int, leftOut: Int, otherCase: String?)] = []
        for (globIndex, glob) in includes.enumerated() {
            var counts: (taken: Int, leftOut: Int, otherCase: String?) = (0, 0, nil)
            var ambiguous: [String] = []
            // Each file matched and checked once, as the walk finds it: counted, and taken
            // unless an earlier glob took it.
            let walk = files(matching: glob, in: base, stopped: stopped) { file in
                guard file.matched else {
                    if counts.otherCase == nil { counts.otherCase = file.relative }
                    return
                }
                if isLeftOut(file.relative) {
                    counts.leftOut += 1
                    return
                }
                counts.taken += 1
                if let bytes = file.ambiguousBytes {
                    ambiguous.append(
                        "'\(ShownName.of(bytes: bytes))': the file name holds characters U+F780…U+F7FF, which "
                            + "blurfarm uses for bytes that are not UTF-8: rename it (this input is left out)")
                    return
                }
                found.add(file.relative, glob: globIndex, file: file.file)
            }
            if stopped() { return .failure(Diagnostics([stoppedDiagnostic])) }
            for folder in walk.unreadable where !refused.contains(folder) { refused.append(folder) }
            // What the glob names that is not a file (a FIFO, a socket, a link to a device): an
            // error each, never a silent gap, and never opened (a FIFO would block).
            for other in walk.others where glob.matches(other.relative) {
                if isLeftOut(other.relative) {
                    counts.leftOut += 1
                    continue
                }
                counts.taken += 1
                let line = "'\(ShownName.of(bytes: other.bytes))': is \(other.kind), not a regular file (this input is left out)"
                if !refused.contains(line) { refused.append(line) }
            }
            for line in ambiguous where !refused.contains(line) { refused.append(line) }
            matchCounts.append(counts)
        }
        found.seal()

        // The outputs the manifest asks for, every size of every format of every variant for
        // each input, against the limit, before any is planned: an absurd manifest costs the
        // glob walk, not the plan (300,000 outputs held the service 18 s).
        let perInput = job.outputs.reduce(0) { $0 + $1.eachSize().count * $1.eachFormat().count }
        let (asked, overflow) = found.count.multipliedReportingOverflow(by: perInput)
        if overflow || asked > outputLimit {
            return .failure(Diagnostics([.error(
                "job '\(job.name)' asks for \(overflow ? "more than \(Int.max)" : "\(asked)") outputs "
                    + "(\(found.count) inputs, \(perInput) each), more than the limit of \(outputLimit) "
                    + "(max-outputs in the configuration, or --max-outputs): split the job, or raise the limit",
                at: job.inputLocations.first)]))
        }

        // Every file the job reads, by identity, as a message names it: the inputs in an index
        // (the identities of those whose hash an output's matches asked again), the manifest
        // and the other files it reads by their identities.
        let folders = RealPath.Folders()
        // In plan order: each input read from its place.
        var inputIdentities = IdentityIndex(capacity: found.count)
        for index in 0..<found.count {
            let file = found.identity(index)
            inputIdentities.add(.file(device: file.device, inode: file.inode))
        }
        found.dropIdentities()
        let entries = found
        // What the walk let go (its folders' listings, the sorting of its files) given back
        // before the parts are planned: the threads of the parts after the first, each with
        // its arena, would not reuse it. A no-change run at 100k inputs peaked at 53 MiB, where it peaked
        // at 61 (same time, nine pairs).
        Syscalls.returnFreedMemory()
        inputIdentities.seal()
        var otherReads: [RealPath.Identity: ReadFile] = [:]
        otherReads[RealPath.identity(of: manifestPath)] = .manifest(manifestPath)
        for path in reads { otherReads[RealPath.identity(of: path)] = .other(path) }
        let (inputIndex, readFiles) = (inputIdentities, otherReads)
        /// The file the job reads that is the file of `identity`, if any (the first input, in
        /// order, of several).
        @Sendable func read(_ identity: RealPath.Identity) -> ReadFile? {
            if let other = readFiles[identity] { return other }
            // Every input is a file the walk found (its identity `.file`): a path where nothing
            // is, as a first run's outputs, is none of them (searched for, 8% of a million's plan).
            guard case .file = identity else { return nil }
            return inputIndex.first(of: identity) { RealPath.identity(of: join(base, entries.relative($0))) == identity }
                .map { .input(entries.relative($0)) }
        }
        // Each input glob's fixed folder as the kernel sees it, for the outputs' real paths.
        let fixedFolders = includes.map { RealPath.resolve(join(base, $0.fixedPrefix)) }
        /// The glob that would take the file at `real` (a resolved path) as an input on the next
        /// run, if any.
        @Sendable func nextRunGlob(_ real: String) -> GlobPattern? {
            for (glob, fixed) in zip(includes, fixedFolders) where real.hasPrefix(fixed == "/" ? "/" : fixed + "/") {
                let below = String(real.dropFirst(fixed == "/" ? 1 : fixed.count + 1))
                let relative = glob.belowFixedPrefix(below)
                if glob.matches(relative), !isLeftOut(relative) { return glob }
            }
            return nil
        }
        let sharesVariants = !job.outputs.contains { $0.regionFile != nil }
        /// Whether some size of `variants` may be too large for an input (not enlarged).
        @Sendable func mayNotEnlarge(_ variants: [VariantSpec]) -> Bool {
            variants.contains { $0.resize.map { !$0.sizes.isEmpty && !$0.upscale } ?? false }
        }
        // The job's variants' answer, asked once (asked an input, each variant was copied).
        let jobMayNotEnlarge = mayNotEnlarge(job.outputs)
        // What an input's path is its relative path after (``join(_:_:)``), held once.
        let (basePrefix, noPrefix) = (PathPrefix(base == "." ? "" : base + "/"), PathPrefix(""))
        /// Plans the inputs of `entries` in `range`: a part of the plan, whose positions and
        /// diagnostics count from its start (``PlannedPart``).
        @Sendable func planPart(_ range: Range<Int>, stopped: @Sendable () -> Bool) -> PlannedPart {
            // Each part indexes its own outputs (searched together once all are in).
            var part = PlannedPart(writers: IdentityIndex(capacity: range.count * perInput))
            var diagnostics: [Diagnostic] = []
            var inputs = PlannedInputs.Packer(capacity: range.count, spill: spill)
            // An input's outputs as they are planned, packed with it: one list for all.
            var outputs: [PlannedOutput] = []
            // The job's variants expanded to each size and format, by the input's width (nil: not
            // read), when no variant is resolved per input.
            var expanded: [Int?: [(size: Int?, largest: Int?, variant: PlannedVariant)]] = [:]
            // Whether an output's folder lies in an input glob's fixed folder, by the folder's
            // spelling: only then is its path resolved and matched against the globs (resolved
            // name by name for every output, 6% of a no-change run).
            var inInputFolders: [Substring: Bool] = [:]
            // The outputs' folders, each held once (``PlannedOutput/path``).
            var prefixes = PathPrefix.Made()
            // The prefixes whose folder is not there (found so once, and remembered so for the
            // plan as ``RealPath/Folders`` remembers it): their outputs are not stated, where a
            // first run of a million photos stated each of its 3,000,000 outputs in vain.
            var missingFolders: Set<ObjectIdentifier> = []
            /// The output's real path when an input glob's fixed folder holds it, else nil.
            func realPathIfTaken(_ path: String) -> String? {
                let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
                let spelled = slash.map { path[..<$0] } ?? ""
                if inInputFolders[spelled] == false { return nil }
                let real = RealPath.resolveFolder(of: path, using: folders)
                if inInputFolders[spelled] == nil {
                    let folder = String(real[..<real.utf8.lastIndex(of: UInt8(ascii: "/"))!])
                    inInputFolders[spelled] = fixedFolders.contains { fixed in
                        fixed == "/" || folder == fixed || folder.hasPrefix(fixed + "/")
                    }
                }
                return inInputFolders[spelled]! ? real : nil
            }

            // The kept sizes of the next inputs, looked up together when the job may not
            // enlarge (``InputSizes``): a part's batch at a time.
            var sizesKept = InputSizes.Batch()
            for index in range {
                if jobMayNotEnlarge, (index - range.lowerBound) % OutputRecords.lookUpChunk == 0 {
                    sizesKept = sizes.lookUp(
                        (index..<min(index + OutputRecords.lookUpChunk, range.upperBound)).map { join(base, entries.relative($0)) })
                }
                let (relative, seen) = (entries.relative(index), entries.seen(index))
                // Its folder below the fixed one of the glob that took it: {relpath}.
                let relpath = includes[entries.glob(index)].folderBelowFixedPrefix(of: relative)
                if stopped() {
                    part.stopped = true
                    break
                }
                let (name, ext, stem) = nameParts(of: relative)
                let inputPath = join(base, relative)
                var shownInput: String { ShownName.of(relative) }
                outputs.removeAll(keepingCapacity: true)
                /// The output's path for `variant` (at `size`), or nil with a diagnostic.
                func path(_ variant: VariantSpec, size: Int?) -> String? {
                    do {
                        return normalise(join(base, try variant.pathTemplate.expand(
                            stem: stem, ext: variant.outputExtension ?? ext, name: name, relpath: relpath, job: job.name, variant: variant.name,
                            size: size)))
                    } catch {
                        diagnostics.append(.error(
                            "input '\(shownInput)': \(error); such a name is refused (rename the file)", at: variant.pathLocation))
                        return nil
                    }
                }
                // Variants whose regions come from a file beside the input: read it now; a file
                // missing (without `missing: skip`) or not as the schema says leaves the input out.
                // Without such variants, the job's own, shared (copied once an input: the run took
                // about 2% longer).
                var variants: [VariantSpec] = sharesVariants ? job.outputs : []
                var leftOut: String?
                var failedVariants: [VariantSpec] = []
                var withoutRegionFile: Set<String> = []  // variants passed through: no region file, `missing: skip`
                for variant in sharesVariants ? [] : job.outputs {
                    guard let spec = variant.regionFile else {
                        variants.append(variant)
                        continue
                    }
                    switch regionFile(
                        of: variant, spec, inputPath: inputPath, shownInput: shownInput,
                        placeholders: (stem, ext, name, relpath, job.name), confinement: confinement)
                    {
                    case .regions(let resolved, let file):
                        variants.append(resolved)
                        part.regionFiles.append(file)
                    case .passedThrough(let resolved, let file, let note):
                        variants.append(resolved)
                        part.regionFiles.append(file)
                        if let note {
                            part.passedThrough.append(note)
                            withoutRegionFile.insert(variant.name)
                        }
                    case .refused(let line, let file):
                        leftOut = leftOut ?? line
                        failedVariants.append(variant)
                        if let file { part.regionFiles.append(file) }
                    }
                }
                if let leftOut {
                    part.refused.append(leftOut)
                    if !failedVariants.isEmpty {
                        // Every size and format those variants could have written: whatever an earlier run made.
                        let outputs = failedVariants.flatMap { variant in
                            variant.eachSize(sourceWidth: nil).flatMap { size, _, sized in
                                sized.eachFormat().compactMap { path($0, size: size) }
                            }
                        }
                        part.regionFailed.append(JobPlan.RegionFailure(input: inputPath, outputs: outputs, reason: leftOut))
                    }
                    continue
                }
                // The input's width, asked only when some size may be too large for it; unreadable,
                // every size is planned (the run reports the input).
                let sourceWidth = (sharesVariants ? jobMayNotEnlarge : mayNotEnlarge(variants))
                    ? sizes.size(of: inputPath, in: sizesKept) { try? JobShards.headerSize($0, confinement: confinement) }?.width : nil
                var notEnlarged: [NotEnlargedOutput] = []
                for variant in sourceWidth == nil ? [] : variants.flatMap({ $0.eachFormat() }) {
                    for size in sourceWidth.map(variant.sizesLarger(than:)) ?? [] {
                        guard let path = path(variant.sized(size), size: size) else { continue }
                        notEnlarged.append(NotEnlargedOutput(
                            input: relative, output: path, variant: variant.name, width: size, sourceWidth: sourceWidth!))
                    }
                }
                // Each size of each format: the formats of one size are made from one render. The
                // job's variants as they stand are expanded once per source width and shared by
                // their outputs; variants resolved for this input alone (regions from its file) are
                // its own.
                let each: [(size: Int?, largest: Int?, variant: PlannedVariant)]
                if sharesVariants, let known = expanded[sourceWidth] {
                    each = known
                } else {
                    each = sharingDecodes(
                        variants.flatMap { $0.eachSize(sourceWidth: sourceWidth) }.flatMap { size, largest, variant in
                            variant.eachFormat().map { (size, largest, $0) }
                        }
                    ).map { ($0.size, $0.largest, PlannedVariant($0.variant)) }
                    if sharesVariants { expanded[sourceWidth] = each }
                }
                for (size, largest, shared) in each {
                    // The shared spec read in place, not copied an output.
                    guard let path = path(shared.spec, size: size) else { continue }
                    var variant: VariantSpec { shared.spec }
                    var shownPath: String { ShownName.of(path) }
                    // One `stat`, whose stamp the up-to-date check compares (``SeenStamp``); none
                    // where the folder is not there.
                    let (prefix, name) = prefixes.split(path)
                    let folderMissing = !missingFolders.isEmpty && missingFolders.contains(ObjectIdentifier(prefix))
                    let stated = folderMissing ? nil : Syscalls.status(path)
                    let identity = RealPath.identity(of: path, stated: stated, using: folders)
                    if !folderMissing, case .path = identity { missingFolders.insert(ObjectIdentifier(prefix)) }
                    if let victim = read(identity) {
                        diagnostics.append(.error(
                            "variant '\(variant.name)' would overwrite \(victim) (writing '\(shownPath)' for \(shownInput))",
                            at: variant.pathLocation))
                    } else if let real = realPathIfTaken(path), let glob = nextRunGlob(real) {
                        diagnostics.append(.error(
                            "variant '\(variant.name)' writes '\(shownPath)' (for \(shownInput)), which is really "
                                + "'\(ShownName.of(real))': the input glob '\(glob)' would take it as an "
                                + "input on the next run; write the outputs elsewhere or exclude them",
                            at: variant.pathLocation))
                    } else {
                        part.writers.add(identity)
                        part.numbers.next(input: inputs.count, diagnosticsBefore: diagnostics.count)
                        // Not stated: nothing there when its folder is not (a first run's) or
                        // `lstat` says so, and the check takes it for missing without asking again.
                        var absent: Bool {
                            if case .path = identity { return true }
                            return Syscalls.linkStatus(path) == nil
                        }
                        outputs.append(PlannedOutput(
                            shared: shared, prefix: prefix, name: name, largestSize: largest, size: size,
                            seen: stated.map(SeenStamp.init) ?? (absent ? .absent : .unseen)))
                        if !withoutRegionFile.isEmpty, withoutRegionFile.contains(variant.name) { part.unredacted.append(path) }
                    }
                }
                inputs.append(
                    prefix: relative.hasPrefix("/") ? noPrefix : basePrefix, relativePath: relative, outputs: outputs,
                    notEnlarged: notEnlarged, seen: seen)
            }
            (part.inputs, part.diagnostics) = (inputs.packed(), diagnostics)
            part.writers.seal()
            return part
        }
        // In parts, one a core, each of at least `partInputs`, planned at once and put
        // together in order: the plan is the one a single part makes (`PlanPartsTests`).
        let partCount = max(1, min(ProcessInfo.processInfo.activeProcessorCount, entries.count / max(1, partInputs)))
        let bounds = (0...partCount).map { entries.count * $0 / partCount }
        // Each part let go once it is in.
        var parts = Threads.concurrently(partCount) { planPart(bounds[$0]..<bounds[$0 + 1], stopped: stopped) }.map(Optional.some)
        var inputParts: [PlannedInputs] = []
        var inputCount = 0
        var passedThrough: [String] = []
        var regionFiles: [String] = []
        var regionFailed: [JobPlan.RegionFailure] = []
        var unredacted: [String] = []
        // The outputs by identity, each part's index and its outputs' numbers with the inputs and
        // diagnostics before the part: two that are one file are found once every output is in.
        var writers: [(index: IdentityIndex, numbers: OutputNumbers, inputsBefore: Int, diagnosticsBefore: Int)] = []
        for index in parts.indices {
            guard let part = parts[index].take(), !part.stopped else { return .failure(Diagnostics([stoppedDiagnostic])) }
            writers.append((part.writers, part.numbers, inputCount, diagnostics.count))
            inputParts.append(part.inputs)
            inputCount += part.inputs.count
            diagnostics += part.diagnostics
            refused += part.refused
            passedThrough += part.passedThrough
            regionFiles += part.regionFiles
            regionFailed += part.regionFailed
            unredacted += part.unredacted
        }
        let inputs = PlannedInputs(joining: inputParts)
        inputParts = []
        /// The output numbered `number` in part `part`, as the plan places it.
        func placed(_ part: Int, _ number: Int) -> Writer {
            let place = writers[part].numbers.place(of: number)
            return Writer(
                input: place.input + writers[part].inputsBefore, output: place.output,
                before: place.diagnosticsBefore + writers[part].diagnosticsBefore)
        }
        var collisions = Collisions()
        let runs = IdentityIndex.sharedHashes(across: writers.map(\.index))
        let shared: [[Writer]] = runs.map { run in run.map { placed($0.index, $0.position) } }
        sameFiles(inputs, shared, folders: folders, diagnostics: &diagnostics, collisions: &collisions)
        /// Why a file the job writes besides its outputs, of `identity`, cannot be: a file the
        /// job reads, or one of its outputs (nil: it can).
        func taken(_ identity: RealPath.Identity) -> String? {
            let writer = writers.indices.lazy.compactMap { part in
                writers[part].index.first(of: identity) {
                    let writer = placed(part, $0)
                    return RealPath.identity(of: inputs[writer.input].outputs[writer.output].path, using: folders) == identity
                }.map { placed(part, $0) }
            }.first
            return read(identity).map { "it is \($0)" }
                ?? regionFiles.first { RealPath.identity(of: $0) == identity }.map {
                    "it is the region file '\(ShownName.of($0))', which the job reads"
                }
                ?? writer.map {
                    "variant '\(inputs[$0.input].outputs[$0.output].variant.name)' writes it "
                        + "(for \(ShownName.of(inputs[$0.input].relativePath)))"
                }
        }
        // The output map is never a file the job reads or another of its outputs.
        let mapIdentity = job.map.map { RealPath.identity(of: join(base, $0)) }
        if let map = job.map, let identity = mapIdentity, let problem = taken(identity) {
            diagnostics.append(.error("the output map cannot be '\(ShownName.of(map))': \(problem)", at: job.mapLocation))
        }
        // Nor are the files the run writes (`run --report`, `--log`), nor its map.
        for file in runFiles {
            let identity = RealPath.identity(of: file.path)
            if let problem = taken(identity) ?? (identity == mapIdentity ? "it is the job's output map" : nil) {
                diagnostics.append(.error("\(file.what) cannot be '\(ShownName.of(file.path))': \(problem)", at: nil))
            }
        }
        diagnostics += collisions.diagnostics
        if !diagnostics.isEmpty { return .failure(Diagnostics(diagnostics)) }
        return .success(JobPlan(
            job: job, manifestPath: manifestPath, folder: base, inputs: inputs, tileSize: job.tile ?? defaultTile,
            refused: refused, unmatchedGlobs: unmatched(job, includes, matchCounts, base: base),
            passedThrough: passedThrough, unredacted: unredacted, regionFiles: regionFiles, regionFailed: regionFailed))
    }

    /// Inputs planned together at least (``plan(_:manifestPath:defaultTile:reads:sizes:outputLimit:partInputs:spill:runFiles:confinement:stopped:)``
    /// plans a job's inputs in parts, one a core): below this, one part. Most of a part's time
    /// is its outputs' `stat` and their paths; 1,024 inputs take about 25 ms, far more than
    /// starting a thread.
    public static let planPartInputs = 1024

    /// The inputs of a plan made together (``planPartInputs``), with what they add to the
    /// plan; positions and diagnostics count from the part's start.
    struct PlannedPart {
        var writers: IdentityIndex
        /// The outputs of ``writers``, by their positions there.
        var numbers = OutputNumbers()
        var inputs: PlannedInputs = []
        var diagnostics: [Diagnostic] = []
        var refused: [String] = []
        var passedThrough: [String] = []
        var regionFiles: [String] = []
        var regionFailed: [JobPlan.RegionFailure] = []
        var unredacted: [String] = []
        /// Whether `stopped` said so before the part's end.
        var stopped = false
    }

    /// An output of a plan being made, found again from its number (``OutputNumbers``) when
    /// its hash is another's: its input's place in the plan and its own in the input's, and
    /// the number of diagnostics before it (where one that names it goes).
    struct Writer: Comparable {
        let input: Int, output: Int, before: Int

        static func < (a: Writer, b: Writer) -> Bool { (a.input, a.output) < (b.input, b.output) }
        static func == (a: Writer, b: Writer) -> Bool { (a.input, a.output) == (b.input, b.output) }
    }

    /// The outputs of `inputs` that are one file (of each run of writers whose hashes are one,
    /// ``IdentityIndex/sharedHashes(across:)``, their identities asked again): each after the
    /// first of its file is a collision of one variant (told once per variant) or an error of
    /// its own, placed where the plan came to it, as if it had been told then.
    static func sameFiles(
        _ inputs: PlannedInputs, _ shared: [[Writer]], folders: RealPath.Folders,
        diagnostics: inout [Diagnostic], collisions: inout Collisions
    ) {
        var later: [(writer: Writer, first: Writer)] = []
        for run in shared {
            var files: [(identity: RealPath.Identity, first: Writer)] = []
            for writer in run {
                let identity = RealPath.identity(of: inputs[writer.input].outputs[writer.output].path, using: folders)
                if let file = files.first(where: { $0.identity == identity }) {
                    later.append((writer, file.first))
                } else {
                    files.append((identity, writer))
                }
            }
        }
        var placed: [(before: Int, Diagnostic)] = []
        for (writer, first) in later.sorted(by: { $0.writer < $1.writer }) {
            let (input, output) = (inputs[writer.input], inputs[writer.input].outputs[writer.output])
            let (otherInput, other) = (inputs[first.input], inputs[first.input].outputs[first.output])
            let variant = output.variant
            if other.variant.name == variant.name, other.path == output.path {
                // Told once per variant, after every input: 30 photos into one file is one line.
                collisions.add(variant, otherInput.relativePath, input.relativePath, output.path)
            } else {
                let same = other.path == output.path ? "" : " (as '\(ShownName.of(other.path))': the same file)"
                placed.append((writer.before, .error(
                    "variants '\(other.variant.name)' (for \(ShownName.of(otherInput.relativePath))) and '\(variant.name)' "
                        + "(for \(ShownName.of(input.relativePath))) both write '\(ShownName.of(output.path))'\(same)",
                    at: variant.pathLocation)))
            }
        }
        // From the last, so that each goes where the plan came to its output.
        for (before, diagnostic) in placed.reversed() { diagnostics.insert(diagnostic, at: before) }
    }

    /// A file the job reads, as a message names it (made only for a message).
    /// A file a run writes besides the outputs, as a message names it (`the report
    /// (--report)`), and its path (relative to the working directory).
    public struct RunFile: Sendable {
        public let what: String
        public let path: String

        public init(_ what: String, path: String) { (self.what, self.path) = (what, path) }
    }

    enum ReadFile: CustomStringConvertible {
        case input(String), manifest(String), other(String)

        var description: String {
            switch self {
            case .input(let relative): "the input '\(ShownName.of(relative))'"
            case .manifest(let path): "the manifest '\(ShownName.of(path))'"
            case .other(let path): "'\(ShownName.of(path))', which the job reads"
            }
        }
    }

    /// The outputs of one input with each variant resized to one width alone (`resize: width:
    /// W`, fitted inside) that another variant makes as one of its `sizes` for this input, with
    /// the same `upscale` and `sharpen`, given that variant's largest size: one decode then
    /// serves both, and the two have the same pixels, the size's (a srcset and a blurred
    /// backdrop at one of its widths, as a libvips script makes them). Where several variants
    /// make that size, the smallest largest serves.
    static func sharingDecodes(
        _ outputs: [(size: Int?, largest: Int?, variant: VariantSpec)]
    ) -> [(size: Int?, largest: Int?, variant: VariantSpec)] {
        var largestOf: [ResizeSpec: Int] = [:]
        for (size, largest, variant) in outputs {
            guard size != nil, let largest, let resize = variant.resize else { continue }
            largestOf[resize] = min(largestOf[resize] ?? largest, largest)
        }
        return outputs.map { size, largest, variant in
            // The keys are sizes' resizes: a width, fitted inside; equal to one, a width alone.
            guard size == nil, let resize = variant.resize, let shared = largestOf[resize] else {
                return (size, largest, variant)
            }
            return (size, shared, variant)
        }
    }

    /// A diagnostic at each input glob that matches no file the job takes: a warning when
    /// another glob of the job matched, an error when none did (docs/manifest.md), with a note
    /// when a file matches but for case. It names the folder the search started in (the glob's
    /// fixed folder in `base`, absolute), and says when that folder does not exist.
    static func unmatched(
        _ job: JobSpec, _ globs: [GlobPattern], _ counts: [(taken: Int, leftOut: Int, otherCase: String?)],
        base: String
    ) -> [Diagnostic] {
        let anyTaken = counts.contains { $0.taken > 0 }
        var diagnostics: [Diagnostic] = []
        for (index, (glob, count)) in zip(globs, counts).enumerated() where count.taken == 0 {
            let location = index < job.inputLocations.count ? job.inputLocations[index] : nil
            let shown = ShownName.of(glob.text)
            let folder = normalise(RealPath.absolute(join(base, glob.fixedPrefix)))
            let shownFolder = ShownName.of(folder)
            let message: String
            if count.leftOut > 0 {
                message = "the input glob '\(shown)' matches only files that are left out (excluded, or the job's outputs)"
            } else if Syscalls.status(folder) == nil {
                let relative = glob.isAbsolute ? "" : " (a glob is relative to the manifest's folder)"
                message = "the input glob '\(shown)' matches no file: the folder '\(shownFolder)' does not exist\(relative)"
            } else {
                message = "the input glob '\(shown)' matches no file in '\(shownFolder)'"
            }
            diagnostics.append(Diagnostic(anyTaken ? .warning : .error, at: location, message))
            if let other = count.otherCase {
                diagnostics.append(.note(
                    "globs are case-sensitive: '\(ShownName.of(other))' matches but for case; alternatives match "
                        + "several spellings, as in '*.{jpg,JPG}'",
                    at: location))
            }
        }
        return diagnostics
    }

    /// The files a variant's template could name, as a glob relative to the manifest's folder:
    /// `{job}` and `{variant}` as they are, `{relpath}` as any folders (`**`) when it is a whole
    /// segment, any other placeholder as any text (`*`); absolute for an absolute template.
    /// `nil` for a template that climbs with `..`: those the plan checks file by file.
    static func outputGlob(_ template: PathTemplate, job: String, variant: String) -> GlobPattern? {
        var text = ""
        func literal(_ s: String) { text += GlobPattern.escaping(s) }
        for (index, part) in template.parts.enumerated() {
            switch part {
            case .literal(let s): literal(s)
            case .placeholder(.job): literal(job)
            case .placeholder(.variant): literal(variant)
            case .placeholder(.relpath):
                var next: String?
                if index + 1 < template.parts.count, case .literal(let s) = template.parts[index + 1] { next = s }
                let wholeSegment = (text.isEmpty || text.hasSuffix("/"))
                    && (index + 1 == template.parts.count || next?.hasPrefix("/") == true)
                if wholeSegment {
                    text += "**"
                } else if !text.hasSuffix("*") {
                    text += "*"
                }
            case .placeholder:
                if !text.hasSuffix("*") { text += "*" }
            }
        }
        while text.hasPrefix("./") { text.removeFirst(2) }
        let segments = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst(text.hasPrefix("/") ? 1 : 0)
        guard !segments.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }) else { return nil }
        return try? GlobPattern(text)
    }


    /// What the glob walk's `stat` said of a file it found: its identity, and its stamp
    /// (``SeenStamp``) for the up-to-date check.
    struct Stated {
        let device: UInt64, inode: UInt64
        let seen: SeenStamp

        init(_ info: stat) {
            (device, inode, seen) = (UInt64(info.st_dev), UInt64(info.st_ino), SeenStamp(info))
        }
    }

    /// A regular file (or a link to one) a walk took (``files(under:in:takes:descends:stopped:each:)``),
    /// as a `/`-separated path relative to the base, with what `stat` said as it told what it
    /// is, and whether the glob matches it (else it would but for case); a path that would be
    /// ambiguous as text (it holds U+F780…U+F7FF itself) comes with its bytes.
    typealias WalkedFile = (relative: String, ambiguousBytes: [UInt8]?, file: Stated, matched: Bool)

    /// What the search for one input glob found besides its files, which it hands over as it
    /// finds them (``files(under:in:takes:descends:stopped:each:)``).
    struct GlobWalk {
        /// What was taken that is neither a file nor a folder (a FIFO, a socket, a device or a
        /// link to one): its path, as text and as bytes, and what it is ("a FIFO").
        var others: [(relative: String, bytes: [UInt8], kind: String)] = []
        /// The folders that could not be read, each as a line naming it.
        var unreadable: [String] = []
        /// The folders listed, relative to the base ("" for the base itself), in the order
        /// they were: what the search cost.
        var listed: [String] = []
    }

    /// What `glob` takes below its fixed folder in `base`, and what it would take but for case
    /// (for the hint when it matches nothing): ``files(under:in:takes:descends:stopped:each:)``.
    static func files(
        matching glob: GlobPattern, in base: String, stopped: () -> Bool = { false }, each: (WalkedFile) -> Void
    ) -> GlobWalk {
        let caseless = try? GlobPattern(glob.text.lowercased())
        return files(
            under: glob.fixedPrefix, in: base,
            takes: { glob.matches($0) ? .matched : caseless?.matches($0.lowercased()) == true ? .otherCase : nil },
            descends: { glob.mayMatch(below: $0) || caseless?.mayMatch(below: $0.lowercased()) == true }, stopped: stopped,
            each: each)
    }

    /// How a walk takes a path: as one its glob matches, or as one it would match but for case.
    enum Take { case matched, otherCase }

    /// Why a plan whose `stopped` said true has no outputs.
    public static let stoppedDiagnostic = Diagnostic.error("planning stopped: the job was cancelled while it planned", at: nil)

    /// The files below `prefix` (relative to `base`) whose paths relative to `base` `takes`
    /// accepts, reading only the folders below which `descends` says a path could be taken (a
    /// glob's ``GlobPattern/mayMatch(below:)``: `photos/*.png` lists `photos` and no folder
    /// in it) and looking only at the entries that may be taken or descended into: a folder
    /// of many files that cannot match costs its listing alone, at most. Hidden folders are
    /// searched too; symbolic links to files count, links to folders below the glob's fixed
    /// folder are not followed (no cycles); the fixed folder itself may be one. Paths are
    /// carried as ``PathEncoding`` makes them (bytes that are not UTF-8 as U+F780…U+F7FF).
    static func files(
        under prefix: String, in base: String, takes: (String) -> Take?, descends: (String) -> Bool,
        stopped: () -> Bool = { false }, each: (WalkedFile) -> Void
    ) -> GlobWalk {
        let start = prefix.isEmpty ? base : join(base, prefix)
        guard let info = Syscalls.status(start) else { return GlobWalk() }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            if let take = takes(prefix) { each((prefix, nil, Stated(info), take == .matched)) }
            return GlobWalk()
        }
        var walk = GlobWalk()
        // Folders to read, as byte paths relative to `base`: names are bytes, not text.
        var pending: [[UInt8]] = [PathEncoding.bytes(prefix)]
        while !stopped(), let folder = pending.popLast() {
            func path(_ name: [UInt8]) -> [UInt8] {
                folder.isEmpty ? name : folder.last == UInt8(ascii: "/") ? folder + name : folder + [UInt8(ascii: "/")] + name
            }
            // An absolute glob's folders are absolute: `base` takes no part.
            let absolute = folder.first == UInt8(ascii: "/")
            let entries: [Syscalls.Entry]
            // What was decided of each name wanted, in the order the listing asked: each path
            // decoded and matched once (the entries come back in that order, a few fewer).
            var decided: [(name: [UInt8], bytes: [UInt8], text: String, ambiguous: Bool, take: Take?)] = []
            do {
                entries = try Syscalls.entries(
                    ofFolder: folder.isEmpty
                        ? PathEncoding.bytes(base) : absolute ? folder : PathEncoding.bytes(join(base, "")) + folder,
                    where: { name in
                        let bytes = path(name)
                        let (text, ambiguous) = PathEncoding.decode(bytes)
                        let take = takes(text)
                        guard take != nil || descends(text) else { return false }
                        decided.append((name, bytes, text, ambiguous, take))
                        return true
                    })
                walk.listed.append(PathEncoding.decode(folder).text)
            } catch {
                let shown = folder.isEmpty ? "." : ShownName.of(bytes: folder)
                walk.unreadable.append("cannot read the folder '\(shown)' (\(error.reason)): its files are left out")
                continue
            }
            var next = 0
            for entry in entries {
                guard let at = decided[next...].firstIndex(where: { $0.name == entry.name }) else { continue }
                let (_, bytes, text, ambiguous, take) = decided[at]
                next = at + 1
                if entry.isFolder {
                    if descends(text) { pending.append(bytes) }
                } else if take == nil {
                    continue
                } else if let file = entry.file {
                    each((text, ambiguous ? bytes : nil, Stated(file), take == .matched))
                } else if let kind = entry.otherKind {
                    walk.others.append((text, bytes, kind))
                }
            }
        }
        return walk
    }

    /// `relative` in `folder` (`relative` itself when absolute, or when `folder` is `.`).
    public static func join(_ folder: String, _ relative: String) -> String {
        if relative.hasPrefix("/") { return relative }
        return folder == "." ? relative : folder + "/" + relative
    }

    /// `a/./b` → `a/b`, `a/x/../b` → `a/b`: one spelling per path, so collisions are found.
    static func normalise(_ path: String) -> String {
        isNormal(path) ? path : respelled(path)
    }

    /// ``normalise(_:)`` name by name, whatever the path.
    static func respelled(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." { parts.removeLast(); continue }
            parts.append(part)
        }
        let joined = parts.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + joined : (joined.isEmpty ? "." : joined)
    }
}

extension JobPlanner {
    /// The name of `relative` (a walked input's path, without a `/` at its end) after its last
    /// `/`, that name's extension after its last `.` when the dot neither begins nor ends it,
    /// and the name without it: NSString's `lastPathComponent`, `pathExtension` and their
    /// difference (`PathSpellingPlanTests`), from ``PathName`` (through NSString they took 3.7%
    /// of a 100,000-input no-change run).
    static func nameParts(of relative: String) -> (name: String, ext: String, stem: String) {
        let name = PathName.lastName(of: relative)
        let ext = PathName.pathExtension(of: name)
        if ext.isEmpty { return (name, "", name) }
        return (name, ext, String(name[..<name.utf8.index(name.endIndex, offsetBy: -(ext.utf8.count + 1))]))
    }

    /// Whether ``normalise(_:)`` leaves `path` as it is: no empty name (`//`, a `/` at the
    /// end), no `.` or `..`, read from its bytes (most paths a plan makes, which spent 5% of
    /// a 100,000-input no-change run split and joined again).
    static func isNormal(_ path: String) -> Bool {
        let (slash, dot) = (UInt8(ascii: "/"), UInt8(ascii: "."))
        var (length, dots) = (0, 0)
        for (offset, byte) in path.utf8.enumerated() {
            if byte == slash {
                if offset == 0 { continue }  // an absolute path's
                if length == 0 || (length == dots && dots <= 2) { return false }
                (length, dots) = (0, 0)
            } else {
                length += 1
                if byte == dot { dots += 1 }
            }
        }
        return length > 0 && !(length == dots && dots <= 2)
    }
}

/// Inputs of one variant that would write one file, gathered while planning and told once per
/// variant (the first pair, how many inputs and files in all, and the placeholders that would
/// tell them apart and are not in the path yet), not once per pair.
struct Collisions {
    private var byVariant: [String: (variant: VariantSpec, first: (String, String, String), inputs: Set<String>, files: Set<String>)] = [:]
    private var order: [String] = []

    /// `input` (relative) would write `path`, which `earlier` writes, for `variant`.
    mutating func add(_ variant: VariantSpec, _ earlier: String, _ input: String, _ path: String) {
        if byVariant[variant.name] == nil {
            order.append(variant.name)
            byVariant[variant.name] = (variant, (earlier, input, path), [], [])
        }
        byVariant[variant.name]!.inputs.formUnion([earlier, input])
        byVariant[variant.name]!.files.insert(path)
    }

    /// One error per variant.
    var diagnostics: [Diagnostic] {
        order.map { name in
            let (variant, (a, b, path), inputs, files) = byVariant[name]!
            let more = inputs.count > 2
                ? " (\(inputs.count) inputs write \(counted(files.count, "file")) between them)" : ""
            return .error(
                "the inputs '\(ShownName.of(a))' and '\(ShownName.of(b))' both write '\(ShownName.of(path))'\(more) "
                    + "(variant '\(name)'): \(Self.hint(variant.pathTemplate, a, b))",
                at: variant.pathLocation)
        }
    }

    /// What to put in `template` to tell the inputs `a` and `b` (relative paths) apart.
    static func hint(_ template: PathTemplate, _ a: String, _ b: String) -> String {
        let (nameA, nameB) = (PathName.lastName(of: a), PathName.lastName(of: b))
        let (stemA, stemB) = ((nameA as NSString).deletingPathExtension, (nameB as NSString).deletingPathExtension)
        let wanted: [PathTemplate.Placeholder]
        if stemA != stemB {
            wanted = template.uses(.stem) || template.uses(.name) ? [.relpath] : [.stem]
        } else if nameA != nameB {
            wanted = [.ext]
        } else {
            wanted = [.relpath]
        }
        let missing = wanted.filter { !template.uses($0) }
        guard let first = missing.first else {
            return "two input globs take files of one name from different folders; give each its own variant or path"
        }
        return "put {\(first.rawValue)} in its path to tell them apart"
    }
}
