import Foundation
import Testing
@testable import KagamiHAR

/// HAR's dates are written from a day count (no Calendar per entry): every date must read as
/// the Gregorian calendar in UTC gives it, across leap days, century years and before 1970.
@Suite struct HARDateTests {
    static func byCalendar(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let millis = (date.timeIntervalSince1970 * 1000).rounded(.down)
        let seconds = (millis / 1000).rounded(.down)
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: seconds))
        func pad(_ n: Int?, _ width: Int) -> String {
            let text = String(n ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let fraction = Int(millis) - Int(seconds) * 1000
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2)).\(pad(fraction, 3))Z"
    }

    @Test func knownDates() {
        #expect(HARDate.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(HARDate.format(Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
        #expect(HARDate.format(Date(timeIntervalSince1970: 4_107_542_399.999)) == "2100-02-28T23:59:59.999Z")
        #expect(HARDate.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    @Test func agreesWithTheCalendar() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            // 1900 to 2200, to the millisecond.
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: -2_208_988_800_000...7_258_118_400_000, using: &generator)) / 1000)
            #expect(HARDate.format(date) == Self.byCalendar(date), "\(date.timeIntervalSince1970)")
        }
        // Every day boundary of four years around a leap day and a century.
        for day in stride(from: 946_598_400.0, to: 946_598_400.0 + 4 * 366 * 86_400, by: 86_400) {
            for offset in [-0.001, 0, 0.001] {
                let date = Date(timeIntervalSince1970: day + offset)
                #expect(HARDate.format(date) == Self.byCalendar(date))
            }
        }
    }
}
