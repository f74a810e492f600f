/// `count` and `noun`, the noun in the plural unless the count is one: `1 input`, `2 inputs`,
/// `0 tiles`. For the English nouns of blurfarm's messages, which all take an `s`.
public func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}
