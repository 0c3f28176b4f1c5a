/// A call invite that cannot fit the provider's limit once encoded (`/api/v1/calls` answers 413).
public struct CallInviteTooLarge: Error, Sendable, Equatable, CustomStringConvertible {
    /// The encoded payload's size in bytes, as the provider would count it.
    public var size: Int
    /// The most the provider accepts, in bytes.
    public var limit: Int
    /// The provider as the answer names it: `APNs VoIP` or `FCM`.
    public var provider: String
    /// The size of the invite's ciphertext, the part the caller controls.
    public var inviteBytes: Int

    public init(size: Int, limit: Int, provider: String, inviteBytes: Int) {
        self.size = size
        self.limit = limit
        self.provider = provider
        self.inviteBytes = inviteBytes
    }

    public var description: String {
        "The \(inviteBytes)-byte call invite becomes a \(size)-byte \(provider) payload once encoded; \(provider) accepts at most \(limit) bytes."
    }
}
