import KagamiCLI

@main
struct KagamiMain {
    static func main() async {
        await Kagami.main(nil)
    }
}
