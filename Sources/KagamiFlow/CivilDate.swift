/// A day of the proleptic Gregorian calendar, from a count of days since 1970-01-01, without a
/// `Calendar` (which costs a lookup of the time zone and locale per date): eras of 400 years,
/// each year counted from March so the leap day ends it (Howard Hinnant's days-to-civil).
public struct CivilDate: Equatable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(daysSince1970 days: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// The day and the second within it (0 to 86,399) of a count of seconds since 1970-01-01.
    public static func split(secondsSince1970 seconds: Int) -> (date: CivilDate, secondOfDay: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        return (CivilDate(daysSince1970: days), seconds - days * 86_400)
    }
}
