/// What `CallDeviceStorage.addDevice` did with a device.
///
/// A push token, and a VoIP token, is held by the first live API key that registered it: only that key's devices
/// seal Home Assistant notifications to it and ring it. Another key's registration of a held token is refused, so a
/// second key holder cannot take over a device someone else registered. The holder may register the token again (a
/// new device with a new key, which then seals). Once every device of the holder with that token is deleted, or the
/// holder is revoked, the token is free (or held by the next live key that registered it).
public enum CallDeviceRegistration: Sendable, Equatable {
    /// Stored: its API key holds its tokens now.
    case added
    /// Not stored: another live API key holds the device's push token.
    case pushTokenHeldByAnotherKey
    /// Not stored: another live API key holds the device's VoIP token.
    case voipTokenHeldByAnotherKey
}
