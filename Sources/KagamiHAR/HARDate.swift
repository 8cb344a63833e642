import Foundation
import KagamiFlow

/// HAR's dates: ISO 8601 with fractional seconds and an offset (`2026-05-28T20:26:40.123+02:00`).
enum HARDate {
    /// UTC with milliseconds, as browsers write them.
    static func format(_ date: Date) -> String {
        let millis = (date.timeIntervalSince1970 * 1000).rounded(.down)
        let seconds = Int((millis / 1000).rounded(.down))
        let fraction = Int(millis) - seconds * 1000
        let (day, second) = CivilDate.split(secondsSince1970: seconds)
        var text: [UInt8] = []
        text.reserveCapacity(24)
        func pad(_ n: Int, _ width: Int) {
            let digits = String(n).utf8
            text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, width - digits.count)))
            text.append(contentsOf: digits)
        }
        pad(day.year, 4); text.append(UInt8(ascii: "-")); pad(day.month, 2); text.append(UInt8(ascii: "-")); pad(day.day, 2)
        text.append(UInt8(ascii: "T")); pad(second / 3600, 2); text.append(UInt8(ascii: ":")); pad(second / 60 % 60, 2)
        text.append(UInt8(ascii: ":")); pad(second % 60, 2); text.append(UInt8(ascii: ".")); pad(fraction, 3); text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    /// Any RFC 3339 date-time: fraction of any length, `Z` or `±hh:mm` (or `±hhmm`).
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + width)] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += width
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if expect("Zz") {
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2) else { return nil }
            _ = expect(":")
            guard let minutes = number(2) else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        guard let base = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)) else { return nil }
        return Date(timeIntervalSince1970: base.timeIntervalSince1970 - TimeInterval(offset) + fraction)
    }

    /// An HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`), as Set-Cookie's Expires carries it.
    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE, dd-MMM-yyyy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
