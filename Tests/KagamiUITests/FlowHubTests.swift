import Foundation
import KagamiFlow
import KagamiRecording
import KagamiTesting
import Synchronization
import Testing

@Suite struct FlowHubTests {
    @Test func forwardsToTheStoreAndEverySubscriber() async throws {
        let store = CollectingSink()
        let hub = FlowHub()
        let chain = RecordingChain([KeepingStage(in: store), hub])
        let first = hub.subscribe()
        let second = hub.subscribe()
        let flow = FlowFixtures.getJSON()
        chain.record(flow)
        first.cancel()
        second.cancel()
        #expect(store.flows.map(\.id) == [flow.id])
        for subscription in [first, second] {
            var received: [Flow] = []
            for await delivery in subscription { if case .flow(let flow) = delivery { received.append(flow) } }
            #expect(received.map(\.id) == [flow.id])
            // Live views get sizes, not bytes: the store has the bytes.
            #expect(received.first?.response?.body.data.isEmpty == true)
            #expect(received.first?.response?.body.size == flow.response?.body.size)
        }
        // The store got the bytes.
        #expect(store.flows.first?.response?.body.data == flow.response?.body.data)
    }

    @Test func aSlowSubscriberLosesTheOldestAndIsToldHowMany() async throws {
        let hub = FlowHub()
        let slow = hub.subscribe(bufferLimit: 3)
        let flows = (0..<10).map { FlowFixtures.getJSON(url: "/items/\($0)") }
        for flow in flows { RecordingChain([hub]).record(flow) }
        slow.cancel()
        var received: [String] = []
        var missed = 0
        for await delivery in slow {
            switch delivery {
            case .flow(let flow): received.append(flow.request.target)
            case .missed(let count): missed += count
            case .heartbeat, .note: break
            }
        }
        #expect(received.last == "/items/9")
        #expect(received.count <= 3, "the buffer holds at most three items")
        #expect(missed > 0, "the subscriber is told it fell behind")
        #expect(received.count + missed <= 10, "nothing is counted twice")
    }

    @Test func cancelledSubscribersAreForgotten() async throws {
        let hub = FlowHub()
        let subscription = hub.subscribe()
        #expect(hub.subscriberCount == 1)
        subscription.cancel()
        #expect(hub.subscriberCount == 0)
        RecordingChain([hub]).record(FlowFixtures.getJSON())
    }
}
