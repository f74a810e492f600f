import Foundation

extension Date {
    /// The date in UTC, to the second, in ISO 8601's basic format (`20261126T022025Z`): the stamp
    /// in the names of the state folder's run reports and Slurm run folders. Formatted by
    /// FoundationEssentials's ISO 8601 style: a `DateFormatter` with a locale and a time zone
    /// loads ICU's data first, milliseconds at the end of every run that writes a report.
    public var stateFolderStamp: String {
        formatted(
            Date.ISO8601FormatStyle(dateSeparator: .omitted, dateTimeSeparator: .standard, timeSeparator: .omitted, timeZone: .gmt))
    }
}
