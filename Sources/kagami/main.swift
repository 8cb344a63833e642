import KagamiCLI

// Inside an async function the call resolves to AsyncParsableCommand's `main()`; at top level
// it resolved to ParsableCommand's synchronous one, which refuses an async root command.
func runKagami() async { await Kagami.main() }
await runKagami()
