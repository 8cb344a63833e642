import Foundation
import KagamiTesting
import Testing
@testable import KagamiRules

@Suite struct ThrottleShaperTests {
    let oneMbps = ThrottleProfile(name: "1 Mbps", downloadKbps: 1000, uploadKbps: 250)

    @Test func oneMegabyteAtOneMegabitTakesEightSeconds() {
        var shaper = ThrottleShaper(profile: oneMbps, direction: .download, clock: ManualClock())
        let plan = shaper.schedule(byteCount: 1_000_000)
        #expect(plan.count == 667)
        #expect(plan.dropLast().allSatisfy { $0.byteCount == 1500 })
        #expect(plan.last?.byteCount == 1_000_000 - 666 * 1500)
        #expect(plan.reduce(0) { $0 + $1.byteCount } == 1_000_000)
        #expect(plan.first?.releaseAt == ManualClock.Instant(offset: .milliseconds(12)))
        #expect(plan.last?.releaseAt == ManualClock.at(8))
    }

    @Test func uploadUsesItsOwnRateAndUtilisationScales() {
        var upload = ThrottleShaper(profile: oneMbps, direction: .upload, clock: ManualClock())
        #expect(upload.schedule(byteCount: 250_000).last?.releaseAt == ManualClock.at(8))
        var half = oneMbps
        half.utilisation = 50
        var download = ThrottleShaper(profile: half, direction: .download, clock: ManualClock())
        #expect(download.schedule(byteCount: 1_000_000).last?.releaseAt == ManualClock.at(16))
    }

    @Test func mtuSetsChunkSize() {
        var profile = oneMbps
        profile.mtu = 576
        var shaper = ThrottleShaper(profile: profile, direction: .download, clock: ManualClock())
        let plan = shaper.schedule(byteCount: 1200)
        #expect(plan.map(\.byteCount) == [576, 576, 48])
        #expect(plan.map(\.releaseAt) == [
            ManualClock.Instant(offset: .nanoseconds(4_608_000)), ManualClock.Instant(offset: .nanoseconds(9_216_000)),
            ManualClock.Instant(offset: .microseconds(9600)),
        ])
    }

    @Test func backToBackReadsQueueAndIdleTimeIsNotSaved() {
        var clock = ManualClock()
        var shaper = ThrottleShaper(profile: oneMbps, direction: .download, clock: clock)
        #expect(shaper.schedule(byteCount: 125_000).last?.releaseAt == ManualClock.at(1))
        clock.now = ManualClock.at(0.5)
        // Arrives while the link is still busy: waits its turn behind the first read.
        #expect(shaper.schedule(byteCount: 125_000, arrivingAt: clock.now).last?.releaseAt == ManualClock.at(2))
        // Arrives after the link went idle: takes its full time from its own arrival.
        #expect(shaper.schedule(byteCount: 125_000, arrivingAt: ManualClock.at(5)).last?.releaseAt == ManualClock.at(6))
    }

    @Test func unlimitedBandwidthReleasesAtOnce() {
        var shaper = ThrottleShaper(
            profile: ThrottlePresetsTests.preset("High Latency DNS"), direction: .download, clock: ManualClock())
        #expect(shaper.schedule(byteCount: 10_000_000) == [ChunkRelease(byteCount: 10_000_000, releaseAt: ManualClock.at(0))])
    }

    @Test func degradedQualityScalesBandwidth() {
        var shaper = ThrottleShaper(profile: oneMbps, direction: .download, clock: ManualClock(), quality: 0.25)
        #expect(shaper.schedule(byteCount: 125_000).last?.releaseAt == ManualClock.at(4))
    }

    @Test func reliabilityPerTenKiB() {
        var profile = oneMbps
        profile.reliability = 50
        let conditions = ThrottleConditions(profile: profile)
        #expect(conditions.deliveryChance(byteCount: 10240) == 0.5)
        #expect(conditions.deliveryChance(byteCount: 20480) == 0.25)
        var random = SeededGenerator(state: 42)
        let delivered = (0..<10_000).filter { _ in conditions.messageGetsThrough(byteCount: 10240, using: &random) }.count
        #expect((4700...5300).contains(delivered))
        var again = SeededGenerator(state: 42)
        let repeated = (0..<10_000).filter { _ in conditions.messageGetsThrough(byteCount: 10240, using: &again) }.count
        #expect(repeated == delivered, "the same seed gives the same run")
        #expect(!ThrottleConditions(profile: ThrottlePresetsTests.preset("100% Loss")).messageGetsThrough(byteCount: 1, using: &random))
    }

    @Test func stabilityAndUnstableQuality() {
        var profile = oneMbps
        profile.stability = 70
        profile.unstableQuality = .init(low: 20, high: 40)
        let conditions = ThrottleConditions(profile: profile)
        var random = SeededGenerator(state: 7)
        let qualities = (0..<10_000).map { _ in conditions.quality(using: &random) }
        let degraded = qualities.filter { $0 < 1 }
        #expect((2700...3300).contains(degraded.count))
        #expect(degraded.allSatisfy { (0.2...0.4).contains($0) })
        var steady = SeededGenerator(state: 7)
        #expect(ThrottleConditions(profile: oneMbps).quality(using: &steady) == 1)
    }
}

@Suite struct ThrottlePresetsTests {
    static func preset(_ name: String) -> ThrottleProfile {
        ThrottleProfile.builtInPresets.first { $0.name == name } ?? ThrottleProfile(name: "missing", downloadKbps: -1, uploadKbps: -1)
    }

    @Test func networkLinkConditionerFigures() {
        let threeG = Self.preset("3G")
        #expect(threeG.downloadKbps == 780 && threeG.uploadKbps == 330 && threeG.latencyMs == 200)
        let edge = Self.preset("Edge")
        #expect(edge.downloadKbps == 240 && edge.uploadKbps == 200 && edge.latencyMs == 840)
        let lte = Self.preset("LTE")
        #expect(lte.downloadKbps == 50000 && lte.uploadKbps == 10000 && lte.latencyMs == 115)
        #expect(Self.preset("Very Bad Network").reliability == 47.83)
        #expect(Self.preset("100% Loss").reliability == 0)
        let names = Set(ThrottleProfile.builtInPresets.map(\.name))
        for name in ["DSL", "High Latency DNS", "WiFi", "WiFi 802.11ac", "56 kbps Modem", "256 kbps ISDN/DSL", "512 kbps ISDN/DSL",
                     "1 Mbps", "2 Mbps", "8 Mbps", "16 Mbps", "32 Mbps", "100 Mbps Fibre"] {
            #expect(names.contains(name), "\(name)")
        }
    }

    @Test func builtInPresetsCannotBeDeletedOrReplaced() throws {
        var settings = ThrottleSettings()
        #expect(throws: ThrottlePresetError.builtIn("3G")) { try settings.deletePreset(named: "3G") }
        #expect(throws: ThrottlePresetError.builtIn("LTE")) {
            try settings.savePreset(ThrottleProfile(name: "LTE", downloadKbps: 1, uploadKbps: 1))
        }
        try settings.savePreset(ThrottleProfile(name: "Train", downloadKbps: 300, uploadKbps: 100, latencyMs: 600))
        #expect(settings.preset(named: "Train")?.latencyMs == 600)
        try settings.deletePreset(named: "Train")
        #expect(settings.preset(named: "Train") == nil)
        #expect(throws: ThrottlePresetError.unknown("Train")) { try settings.deletePreset(named: "Train") }
    }

    @Test func exportAndImport() throws {
        var source = ThrottleSettings()
        try source.savePreset(ThrottleProfile(
            name: "Hotel WiFi", downloadKbps: 900, uploadKbps: 120, utilisation: 80, latencyMs: 350, mtu: 1400,
            reliability: 90, stability: 60, unstableQuality: .init(low: 10, high: 50)))
        let exported = try source.exportedPresets()
        var target = ThrottleSettings()
        let imported = try target.importPresets(from: exported, file: "presets.json")
        #expect(imported.map(\.name) == ["Hotel WiFi"])
        #expect(target.preset(named: "Hotel WiFi") == source.preset(named: "Hotel WiFi"))
        #expect(throws: RuleDocumentError.self) {
            try target.importPresets(from: "presets:\n  - {name: 3G, downloadKbps: 1, uploadKbps: 1}\n", file: "p.yaml")
        }
    }

    @Test func onlyForSelectedHostsAndApplication() throws {
        let rules = try pipeline("""
            throttling:
              enabled: true
              preset: 3G
              onlyFor: [{host: "*.slow.example"}]
            """)
        #expect(rules.throttleProfile(for: request("http://api.slow.example/"))?.name == "3G")
        #expect(rules.throttleProfile(for: request("http://fast.example/")) == nil)
        #expect(RulePipeline.throttleApplication(Self.preset("3G")).description == "throttled by 3G")
        let custom = try pipeline("""
            throttling:
              enabled: true
              profile: {name: Mine, downloadKbps: 64, uploadKbps: 32, latencyMs: 100}
            """)
        #expect(custom.throttleProfile(for: request("http://any.example/"))?.downloadKbps == 64)
        #expect(try pipeline("throttling: {enabled: false, preset: LTE}").throttleProfile(for: request("http://a/")) == nil)
    }
}
