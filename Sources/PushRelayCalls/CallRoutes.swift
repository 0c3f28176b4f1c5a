import Foundation
import Hummingbird
import PushRelayCore
import PushRelayHTTP
import PushRelaySecurity

/// `/api/v1/devices` and `/api/v1/calls`, authenticated with `Authorization: Bearer <api key>`.
package struct CallRoutes {
    package let service: CallService
    package let maxBodyBytes: Int

    package init(service: CallService, maxBodyBytes: Int) {
        self.service = service
        self.maxBodyBytes = maxBodyBytes
    }

    package func register(_ routes: RouteTable<PushRelayRequestContext>) {
        routes.on("/api/v1/devices", [.post: { request, context in try await registerDevice(request, context) }])
        routes.on(
            "/api/v1/devices/:id",
            [
                .delete: { request, context in
                    let key = try await answer { () throws(CallError) in
                        try await service.authenticate(request.headers[.authorization], peer: context.peerAddress)
                    }
                    let id = try deviceID(context)
                    try await answer { () throws(CallError) in try await service.delete(deviceID: id, apiKeyID: key) }
                    return JSONResponse.make(status: .ok, body: ["deleted": true])
                }
            ]
        )
        routes.on(
            "/api/v1/devices/:id/rotate-key",
            [
                .post: { request, context in
                    let key = try await answer { () throws(CallError) in
                        try await service.authenticate(request.headers[.authorization], peer: context.peerAddress)
                    }
                    let id = try deviceID(context)
                    let newKey = try await answer { () throws(CallError) in try await service.rotateKey(deviceID: id, apiKeyID: key) }
                    return JSONResponse.make(status: .ok, body: keyBody(id, newKey))
                }
            ]
        )
        routes.on("/api/v1/calls", [.post: { request, context in try await call(request, context) }])
    }

    private func deviceID(_ context: PushRelayRequestContext) throws -> String {
        guard let id = context.parameters.get("id"), !id.isEmpty else { throw APIError.badRequest("Missing device id in the path.") }
        return id
    }

    private func keyBody(_ id: String, _ key: [UInt8]) -> JSONValue {
        ["device_id": .string(id), "encryption_type": "aes_256_gcm", "encryption_key": .string(Data(key).base64EncodedString())]
    }

    private func registerDevice(_ request: Request, _ context: PushRelayRequestContext) async throws -> Response {
        let apiKey = try await answer { () throws(CallError) in
            try await service.authenticate(request.headers[.authorization], peer: context.peerAddress)
        }
        var request = request
        let body = try await request.jsonBody(limit: maxBodyBytes)
        let f = try Fields(body)
        let platformText = try f.string("platform")
        guard let platform = HAPlatform(rawValue: platformText.lowercased()) else {
            throw APIError.badRequest("Field 'platform' must be 'ios' or 'android'.")
        }
        // Each token as the device is known (`PushTokenIdentity`): Home Assistant's notifications look the sealing key up
        // by that spelling, and a token in another case is the same device, held by the same key.
        let voipToken = try f.optionalString("voip_token").map(PushTokenIdentity.canonical)
        let pushToken = PushTokenIdentity.canonical(try f.string("push_token"))
        if let voipToken {
            guard platform == .ios else { throw APIError.badRequest("'voip_token' is for iOS devices only (their PushKit token).") }
            if let problem = APNsDeviceToken.problem(voipToken) {
                throw APIError(.badRequest, "MalformedToken", "'voip_token' must be the hex PushKit token. " + problem)
            }
        }
        let appID = try f.string("app_id")
        let label = try f.optionalString("label")
        let webhookID = try f.optionalString("webhook_id")
        let registered = try await answer { () throws(CallError) in
            try await service.register(
                apiKeyID: apiKey,
                platform: platform,
                appID: appID,
                pushToken: pushToken,
                voipToken: voipToken,
                label: label,
                webhookID: webhookID
            )
        }
        return JSONResponse.make(status: .created, body: keyBody(registered.deviceID, registered.key))
    }

    private func call(_ request: Request, _ context: PushRelayRequestContext) async throws -> Response {
        let apiKey = try await answer { () throws(CallError) in
            try await service.authenticate(request.headers[.authorization], peer: context.peerAddress)
        }
        var request = request
        let f = try Fields(try await request.jsonBody(limit: maxBodyBytes))
        let withVideo: Bool
        switch f.object["with_video"] {
        case .bool(let b)?: withVideo = b
        case .string(let s)? where s == "true" || s == "false": withVideo = s == "true"
        case nil, .null?: withVideo = false
        default: throw APIError.badRequest("Field 'with_video' must be true or false.")
        }
        let c = CallService.CallRequest(
            deviceID: try f.string("device_id"),
            callerName: try f.string("caller_name"),
            callerID: try f.string("caller_id"),
            title: try f.optionalString("title"),
            withVideo: withVideo,
            invite: try f.string("invite")
        )
        let sent = try await answer { () throws(CallError) in try await service.call(c, apiKeyID: apiKey) }
        return JSONResponse.make(
            status: .created,
            body: ["notification_uuid": .string(sent.notificationUUID), "delivered_via": .string(sent.deliveredVia)]
        )
    }
}

/// Required and optional string fields of a JSON object body, with 400s that name the field.
private struct Fields {
    let object: [String: JSONValue]

    init(_ body: JSONValue) throws {
        guard case .object(let o) = body else { throw APIError.badRequest("The request body must be a JSON object.") }
        object = o
    }

    func string(_ key: String) throws -> String {
        guard let s = try optionalString(key), !s.isEmpty else { throw APIError.badRequest("Field '\(key)' is required: a non-empty string.") }
        return s
    }

    func optionalString(_ key: String) throws -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw APIError.badRequest("Field '\(key)' must be a string.")
        }
    }
}

extension CallRoutes {
    /// Runs a service call; its `CallError` becomes the JSON error the caller is answered.
    private func answer<T>(_ body: () async throws(CallError) -> T) async throws(APIError) -> T {
        do {
            return try await body()
        } catch {
            throw Self.apiError(error)
        }
    }

    /// The HTTP answer to a refused call-service request.
    package static func apiError(_ error: CallError) -> APIError {
        switch error {
        case .tooManyFailedAttempts:
            return .tooManyFailedAttempts
        case .unauthorized:
            return APIError(
                .unauthorized,
                "Unauthorized",
                "Send a valid API key as 'Authorization: Bearer <key>' (create one with `pushrelay api-key create`).",
                headers: [.wwwAuthenticate: "Bearer"]
            )
        case .storageUnavailable:
            return .storageUnavailable
        case .storageBusy:
            return .storageBusy
        case .unknownDevice(let id):
            return APIError(.notFound, "UnknownDevice", "No device '\(id)' is registered with this API key.")
        case .tokenHeldByAnotherKey(let field):
            return APIError(
                .conflict,
                "TokenHeldByAnotherKey",
                "This '\(field)' is registered with another API key, which alone can register it again. Delete the device with that key, or revoke that key, first."
            )
        case .deadToken(let reason):
            return APIError(
                .gone,
                "InvalidToken",
                "The device's push token is no longer valid (\(reason)); register the device again.",
                fields: ["errorCode": .string(reason)]
            )
        case .notConfigured(.ios):
            return .configuration("Call pushes to iOS are not configured on this server (calls.apns_provider).")
        case .notConfigured(.android):
            return .configuration("Call pushes to Android are not configured on this server (calls.fcm_provider).")
        case .noVoIPToken:
            return APIError(
                .unprocessableContent,
                "NoVoIPToken",
                "This iOS device was registered without a voip_token; register it again with its PushKit token."
            )
        case .inviteTooLarge(let size, let provider, let limit):
            return APIError(
                .contentTooLarge,
                "PayloadTooLarge",
                "The invite, sealed for the device, becomes a \(size)-byte \(provider) payload; \(provider) accepts at most \(limit) bytes. Send a shorter invite."
            )
        case .internalError(let message):
            return APIError(.internalServerError, "InternalError", message)
        case .failed(let failure):
            return .delivery(failure) { message in
                "The device's push token is no longer valid (\(message)); register the device again with its new token."
            }
        }
    }
}
