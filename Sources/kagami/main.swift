import KagamiCLI

await Kagami.launch()
