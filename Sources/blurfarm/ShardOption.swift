import ArgumentParser
import BlurfarmCluster

/// The value of `run --shard`: a ``ShardSelector`` (`I/N`, `env`, `env/N`; docs/cluster.md).
/// A form that is wrong is a usage error (exit status 64); the numbers are checked when the run
/// resolves them (BlurfarmCluster's ``Sharding``): a shard that does not exist, or a number too large, exits 2.
struct ShardOption: ExpressibleByArgument {
    let selector: ShardSelector

    init?(argument: String) {
        guard let selector = ShardSelector(argument) else { return nil }
        self.selector = selector
    }

    static var defaultValueDescription: String { "I/N" }
}
