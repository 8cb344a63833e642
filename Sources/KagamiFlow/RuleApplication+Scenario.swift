// How an exchange a scenario touched is marked: one rule application, made and read here only.

extension RuleApplication {
    /// The mark of a scenario's state on an exchange: `Scenario 'checkout-fails'`,
    /// `POST /checkout: error 503`.
    public static func scenario(_ scenario: String, operation: String, state: String) -> RuleApplication {
        RuleApplication(name: "Scenario '\(scenario)'", description: "\(operation): \(state)")
    }

    /// The scenario, operation and state a scenario's mark names; nil for a rule's.
    public var scenarioMark: (scenario: String, operation: String, state: String)? {
        guard name.hasPrefix("Scenario '"), name.hasSuffix("'"), name.count > "Scenario ''".count,
              let colon = description.range(of: ": ") else { return nil }
        return (
            String(name.dropFirst("Scenario '".count).dropLast()),
            String(description[..<colon.lowerBound]), String(description[colon.upperBound...])
        )
    }
}
