/// What an accepted Home Assistant notification says about its pair (push token, webhook id), and so what it may do to
/// the channel bindings (`PushChannelBindingRegistry`).
package enum PushChannelPairEvidence: Sendable, Equatable {
    /// The push token is real, or the caller is Home Assistant: a cloud provider took a notification counted on the
    /// token's quota, or the notification came through a closed route (`home_assistant.keys`,
    /// `home_assistant.allowed_networks`). The pair is bound, replacing whatever its token or webhook id was bound to.
    case proof
    /// Nothing proves the token real: delivered over a channel, queued for a local-only app, or an uncounted command.
    /// An identical bound pair is kept fresh; nothing is bound, replaced or moved.
    case none
}
