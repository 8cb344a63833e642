import KagamiCLI

await Kagami.main()
