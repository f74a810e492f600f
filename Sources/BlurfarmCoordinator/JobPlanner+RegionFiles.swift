import BlurfarmSystem
import BlurfarmCore
import BlurfarmImageIO
import BlurfarmManifest
import Foundation

extension JobPlanner {
    /// What an input's region file makes of a variant with `regions: {from: …}`.
    enum RegionFileOutcome {
        /// The variant with the file's boxes as its regions (`invert` kept); `file` was read.
        case regions(VariantSpec, file: String)
        /// No regions for this input (no file and `missing: skip`, said by `note`; or a file
        /// without boxes: the detector found nothing, nothing to say): its output is its
        /// source, unfiltered (inverted: filtered everywhere).
        case passedThrough(VariantSpec, file: String, note: String?)
        /// The input is left out: the line says why (no file, or a file not as the schema says);
        /// `file` was looked for (nil when its name could not be made).
        case refused(String, file: String?)
    }

    /// The regions of `variant` for the input at `inputPath` (shown as `shownInput`), from
    /// the file its ``VariantSpec/regionFile`` names beside the input (its placeholders
    /// expanded as an output path's, from `placeholders`). Read without following a FIFO,
    /// at most ``RegionFile/maximumBytes``.
    static func regionFile(
        of variant: VariantSpec, _ spec: RegionFile, inputPath: String, shownInput: String,
        placeholders: (stem: String, ext: String, name: String, relpath: String, job: String), confinement: RootConfinement?
    ) -> RegionFileOutcome {
        let expanded: String
        do {
            expanded = try spec.path.expand(
                stem: placeholders.stem, ext: placeholders.ext, name: placeholders.name, relpath: placeholders.relpath,
                job: placeholders.job, variant: variant.name)
        } catch {
            return .refused(
                "input '\(shownInput)': the region file of variant '\(variant.name)': \(error) (this input is left out)", file: nil)
        }
        let path = regionFilePath(expanded, inputPath: inputPath)
        let shown = ShownName.of(path)
        var passing = variant
        passing.regionFile = nil
        let bytes: [UInt8]
        switch readRegionFile(path, confinement: confinement) {
        case .missing:
            guard spec.missing == .skip else {
                return .refused(
                    "'\(shown)': no such file: the regions of variant '\(variant.name)' for '\(shownInput)' "
                        + "(this input is left out; 'missing: skip' passes it through)", file: path)
            }
            passing.filters = []
            passing.regions = .everywhere
            return .passedThrough(
                passing, file: path,
                note: "'\(shown)': no such file: variant '\(variant.name)' of '\(shownInput)' is published unredacted, "
                    + "its source unfiltered (missing: skip)")
        case .unreadable(let reason):
            return .refused("'\(shown)': \(reason): the regions of '\(shownInput)' (this input is left out)", file: path)
        case .read(let read):
            bytes = read
        }
        let regions: [Region]
        do {
            // Checked against the image as shown; an input that cannot be read fails at its run.
            let displayed = (try? ImageReader.header(ofFile: inputPath, confinement: confinement)).map {
                RegionFile.DisplayedImage(width: $0.width, height: $0.height, orientation: $0.orientation)
            }
            regions = try spec.regions(from: bytes, displayed: displayed)
        } catch {
            return .refused("'\(shown)': \(error) (the regions of '\(shownInput)': this input is left out)", file: path)
        }
        if regions.isEmpty {
            // No box: nothing to filter (inverted: everything).
            if !variant.regions.invert { passing.filters = [] }
            passing.regions = .everywhere
            return .passedThrough(passing, file: path, note: nil)
        }
        passing.regions = RegionMask(regions: regions, invert: variant.regions.invert)
        return .regions(passing, file: path)
    }

    /// The region file of the input at `inputPath` whose template expanded to `expanded`: beside
    /// the input, in its folder.
    static func regionFilePath(_ expanded: String, inputPath: String) -> String {
        let folder = PathName.folder(of: inputPath)
        return folder.isEmpty ? expanded : join(folder, expanded)
    }

    /// The region file `spec` names for the input at `inputPath` of `variant` in job `job`, or
    /// nil when its name cannot be made (the plan said why): what the review sheet reads again.
    public static func regionFilePath(of spec: RegionFile, variant: String, inputPath: String, job: String) -> String? {
        let name = PathName.lastName(of: inputPath)
        let ext = PathName.pathExtension(of: name)
        let stem = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
        guard let expanded = try? spec.path.expand(stem: stem, ext: ext, name: name, relpath: "", job: job, variant: variant)
        else { return nil }
        return regionFilePath(expanded, inputPath: inputPath)
    }

    /// A region file's bytes, or why there are none.
    public enum RegionFileRead: Sendable {
        case read([UInt8])
        case missing
        /// Not a regular file, larger than ``RegionFile/maximumBytes``, or unreadable: why.
        case unreadable(String)
    }

    /// The bytes of the regular region file at `path` (through links; with `confinement`, beneath
    /// its roots), opened without waiting (a FIFO is refused), at most ``RegionFile/maximumBytes``:
    /// how the plan and `apply --regions` read one.
    public static func readRegionFile(_ path: String, confinement: RootConfinement? = nil) -> RegionFileRead {
        let fd: Int32
        if let confinement {
            do throws(ImageIOError) {
                fd = try confinement.openFile(path)
            } catch where error.code == .fileMissing {
                return .missing
            } catch {
                return .unreadable(error.message)
            }
        } else {
            do {
                fd = try Syscalls.openForReading(path)
            } catch where error.errno == ENOENT {
                return .missing
            } catch {
                return .unreadable("cannot open: \(error.reason)")
            }
        }
        defer { Syscalls.close(fd) }
        guard let info = try? Syscalls.status(of: fd) else { return .unreadable("cannot read its status") }
        guard info.st_mode & S_IFMT == S_IFREG else { return .unreadable("is \(fileKindName(info.st_mode)), not a regular file") }
        guard info.st_size <= RegionFile.maximumBytes else {
            return .unreadable("larger than \(RegionFile.maximumBytes / 1024) KB: not a region file")
        }
        do {
            return .read(try Syscalls.readAll(fd, upTo: RegionFile.maximumBytes + 1))
        } catch {
            return .unreadable("cannot read: \(error.reason)")
        }
    }
}
