import Foundation
import KagamiJSON

/// The divisor of `multipleOf`. Binary floating point cannot answer "is 0.0075 a multiple of
/// 0.0001" (the remainder is not 0), so non-integers are divided as decimals, the way the
/// numbers were written.
struct NumberDivisor: Sendable {
    let value: Double
    let integer: Int?
    let decimal: Decimal?

    init?(_ json: JSONValue) {
        guard let value = json.doubleValue, value > 0, value.isFinite else { return nil }
        self.value = value
        if case .integer(let i) = json { integer = i } else { integer = json.intValue }
        decimal = Decimal(string: Self.decimalText(json))
    }

    func divides(_ instance: JSONValue) -> Bool {
        if let integer, case .integer(let n) = instance {
            return n % integer == 0
        }
        guard let x = instance.doubleValue else { return true }
        let quotient = x / value
        guard quotient.isFinite else {
            // Beyond Double's range only one case can be decided: a whole number divided by
            // 1/k (0.5, 0.25, 0.1...) is a multiple of it.
            let reciprocal = 1 / value
            return x.rounded() == x && reciprocal.rounded() == reciprocal
        }
        if let decimal, let dividend = Decimal(string: Self.decimalText(instance)), !dividend.isNaN {
            var exact = dividend / decimal
            var rounded = Decimal()
            NSDecimalRound(&rounded, &exact, 0, .plain)
            return rounded == exact
        }
        return quotient.rounded() == quotient
    }

    private static func decimalText(_ json: JSONValue) -> String {
        switch json {
        case .integer(let i): String(i)
        case .number(let d): "\(d)"
        default: "nan"
        }
    }
}
