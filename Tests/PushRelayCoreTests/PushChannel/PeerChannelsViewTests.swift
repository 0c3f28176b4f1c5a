import PushRelayCore
import Testing

/// When an instance may skip asking the database which other instance holds a device's channel.
@Suite struct PeerChannelsViewTests {
    /// Listening, then a heartbeat that found no other instance's channel.
    private func quiet() -> PeerChannelsView {
        var v = PeerChannelsView()
        v.listenStarted()
        let t = v.heartbeatStarting()
        v.heartbeatAnswered(t, othersHold: false)
        return v
    }

    @Test func assumesOthersMayHoldChannelsUntilAHeartbeatSaysOtherwise() {
        let v = PeerChannelsView()
        #expect(v.othersMayHoldChannels)
        #expect(!quiet().othersMayHoldChannels)
    }

    @Test func believesNoAnswerReadBeforeTheListenWasEstablished() {
        var v = PeerChannelsView()
        let t = v.heartbeatStarting()
        v.listenStarted()
        v.heartbeatAnswered(t, othersHold: false)
        #expect(v.othersMayHoldChannels, "a claim between the heartbeat's read and the listen would go unheard")
        let next = v.heartbeatStarting()
        v.heartbeatAnswered(next, othersHold: false)
        #expect(!v.othersMayHoldChannels)
    }

    @Test func aNoticeDuringAHeartbeatWinsOverItsAnswer() {
        var v = quiet()
        let t = v.heartbeatStarting()
        v.presenceNotice()
        v.heartbeatAnswered(t, othersHold: false)
        #expect(v.othersMayHoldChannels, "the claim may have committed after the heartbeat read the database")
    }

    @Test func aNoticeAfterAQuietAnswerIsHeard() {
        var v = quiet()
        v.presenceNotice()
        #expect(v.othersMayHoldChannels)
    }

    @Test func aLostListenMeansAskingAgainUntilAHeartbeatAfterTheNextListen() {
        var v = quiet()
        v.listenLost()
        #expect(v.othersMayHoldChannels)
        let whileDeaf = v.heartbeatStarting()
        v.heartbeatAnswered(whileDeaf, othersHold: false)
        #expect(v.othersMayHoldChannels, "no answer is believed while notices could be missed")
        v.listenStarted()
        let t = v.heartbeatStarting()
        v.heartbeatAnswered(t, othersHold: false)
        #expect(!v.othersMayHoldChannels)
    }

    @Test func theListenLostDuringAHeartbeatVoidsItsAnswer() {
        var v = quiet()
        let t = v.heartbeatStarting()
        v.listenLost()
        v.listenStarted()
        v.heartbeatAnswered(t, othersHold: false)
        #expect(v.othersMayHoldChannels)
    }

    @Test func anAnswerThatOthersHoldIsAlwaysBelieved() {
        var v = quiet()
        let t = v.heartbeatStarting()
        v.heartbeatAnswered(t, othersHold: true)
        #expect(v.othersMayHoldChannels)
        var deaf = PeerChannelsView()
        deaf.heartbeatAnswered(deaf.heartbeatStarting(), othersHold: true)
        #expect(deaf.othersMayHoldChannels)
    }
}
