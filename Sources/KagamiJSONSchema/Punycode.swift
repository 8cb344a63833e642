/// Punycode (RFC 3492): the encoding of a U-label's code points as the ASCII after "xn--".
enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700, initialBias = 72, initialN = 128

    /// The code points `text` encodes (the part after "xn--"); nil when it is not valid
    /// Punycode (a digit out of range, an overflow, input that ends inside a number).
    static func decode(_ text: Substring) -> [Unicode.Scalar]? {
        var output: [Unicode.Scalar] = []
        var rest = text.unicodeScalars[...]
        // Everything before the last delimiter is the basic code points, copied as they are.
        if let delimiter = rest.lastIndex(of: "-") {
            for scalar in rest[..<delimiter] {
                guard scalar.isASCII else { return nil }
                output.append(scalar)
            }
            rest = rest[rest.index(after: delimiter)...]
        }
        var n = initialN, i = 0, bias = initialBias
        var digits = rest.makeIterator()
        var next = digits.next()
        while next != nil {
            let oldI = i
            var w = 1
            var k = base
            while true {
                guard let scalar = next, let digit = digitValue(scalar) else { return nil }
                next = digits.next()
                guard digit <= (Int(Int32.max) - i) / w else { return nil }
                i += digit * w
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < t { break }
                guard w <= Int(Int32.max) / (base - t) else { return nil }
                w *= base - t
                k += base
            }
            bias = adapt(delta: i - oldI, points: output.count + 1, first: oldI == 0)
            guard i / (output.count + 1) <= Int(Int32.max) - n else { return nil }
            n += i / (output.count + 1)
            i %= output.count + 1
            guard let scalar = Unicode.Scalar(UInt32(n)), !scalar.isASCII else { return nil }
            output.insert(scalar, at: i)
            i += 1
        }
        return output
    }

    /// The Punycode of these code points (without "xn--"); nil on overflow.
    static func encode(_ scalars: [Unicode.Scalar]) -> String? {
        var output = String(String.UnicodeScalarView(scalars.filter(\.isASCII)))
        let basic = output.unicodeScalars.count
        var handled = basic
        if basic > 0 { output += "-" }
        var n = initialN, delta = 0, bias = initialBias
        while handled < scalars.count {
            guard let m = scalars.map({ Int($0.value) }).filter({ $0 >= n }).min() else { return nil }
            guard m - n <= (Int(Int32.max) - delta) / (handled + 1) else { return nil }
            delta += (m - n) * (handled + 1)
            n = m
            for scalar in scalars {
                let c = Int(scalar.value)
                if c < n {
                    delta += 1
                    guard delta <= Int(Int32.max) else { return nil }
                }
                guard c == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.unicodeScalars.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.unicodeScalars.append(digit(q))
                bias = adapt(delta: delta, points: handled + 1, first: handled == basic)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return output
    }

    private static func adapt(delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }

    private static func digitValue(_ scalar: Unicode.Scalar) -> Int? {
        switch scalar.value {
        case 0x61...0x7A: Int(scalar.value) - 0x61
        case 0x41...0x5A: Int(scalar.value) - 0x41
        case 0x30...0x39: Int(scalar.value) - 0x30 + 26
        default: nil
        }
    }

    private static func digit(_ value: Int) -> Unicode.Scalar {
        Unicode.Scalar(UInt8(value < 26 ? 0x61 + value : 0x30 + value - 26))
    }
}
